import { createHash } from 'node:crypto';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Clock } from '../time/clock.js';
import type { ConsumeRequest, ConsumeResult, PeekResult } from './rate-limit.windows.js';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** Longest subject kept as is in a counter's name; `key:<id>` and `ip:<address>` fit easily. */
export const MAX_SUBJECT_LENGTH = 64;

/**
 * The name a subject's counters are kept under: the subject itself when short, else its
 * SHA-256, so no caller can make a counter's name (a Redis key, a memory entry) long, whatever
 * text reaches the subject.
 */
export function counterName(subject: string): string {
  return subject.length <= MAX_SUBJECT_LENGTH
    ? subject
    : `sha256:${createHash('sha256').update(subject).digest('base64url')}`;
}

/**
 * Where the counters live (process memory or Redis). `consume` decides one request against
 * all of its windows and the ban in a single atomic step (one Redis round trip). The store is
 * also handed to ThrottlerModule as its `storage` (the option takes a ThrottlerStorage), so the
 * stock in-memory storage (a timer per hit) is never created. The service never calls
 * `increment`: it implements ThrottlerStorage on top of `consume` for @nestjs/throttler's own
 * guard, were a route to use it, counting under names of their own (`throttler:<key>`).
 */
export abstract class RateLimitStore implements ThrottlerStorage {
  constructor(protected readonly clock: Clock) {}

  /**
   * Decides one request. A store that can decide without I/O answers synchronously (the memory
   * store; the Redis store within a lease), so the hot path awaits nothing it need not.
   */
  abstract consume(request: ConsumeRequest): ConsumeResult | Promise<ConsumeResult>;

  /**
   * Reads the subject's windows and ban without counting anything: the counts the subject's next
   * request (`consume` of the same request on this instance) would start from.
   */
  abstract peek(request: ConsumeRequest): PeekResult | Promise<PeekResult>;

  /** One fixed window of `ttl` ms; a blocked key stays blocked until its window resets. */
  async increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const nowMs = this.clock.now().getTime();
    const result = await this.consume({
      subject: `throttler:${key}`,
      nowMs,
      windows: [{ name: throttlerName, ttlMs: ttl, limit }],
      banThreshold: Number.MAX_SAFE_INTEGER,
      banMs: 0,
    });
    const w = result.windows[0];
    const isBlocked = result.outcome !== 'allowed';
    const seconds = Math.max(1, Math.ceil((w.resetMs - nowMs) / 1000));
    return {
      totalHits: isBlocked ? w.count + 1 : w.count,
      timeToExpire: seconds,
      isBlocked,
      timeToBlockExpire: isBlocked ? seconds : 0,
    };
  }
}
