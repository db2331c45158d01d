import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Clock } from '../common/clock.js';
import type { ConsumeRequest, ConsumeResult } from './rate-limit.windows.js';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * Where the counters live (process memory or Redis). `consume` decides one request against
 * all of its windows and the ban in a single atomic step (one Redis round trip). The store is
 * also handed to ThrottlerModule as its `storage`, so the stock in-memory storage (a timer per
 * hit) is never created; `increment` keeps @nestjs/throttler's storage contract on top of
 * `consume` for anything that calls it directly.
 */
export abstract class RateLimitStore implements ThrottlerStorage {
  constructor(protected readonly clock: Clock) {}

  abstract consume(request: ConsumeRequest): Promise<ConsumeResult>;

  /** One fixed window of `ttl` ms; a blocked key stays blocked until its window resets. */
  async increment(key: string, ttl: number, limit: number, _blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
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
    return { totalHits: isBlocked ? w.count + 1 : w.count, timeToExpire: seconds, isBlocked, timeToBlockExpire: isBlocked ? seconds : 0 };
  }
}
