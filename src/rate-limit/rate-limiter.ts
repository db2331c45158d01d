import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { normalizeIp, type ThrottlerOptions } from '@nestjs/throttler';
import type { Request } from 'express';
import { isIP } from 'node:net';
import type { Principal } from '../auth/auth.types.js';
import type { Limits } from '../api-keys/plans.js';
import { PLAN_LIMITS } from '../api-keys/plans.js';
import { ApiError } from '../errors/api-error.js';
import { requestContext, requestIp } from '../request-context/request-context.js';
import { MetricsService, RateLimitRejection } from '../metrics/metrics.service.js';
import { Clock } from '../time/clock.js';
import { rateLimitConfig, type RateLimitConfig } from '../config/rate-limit.config.js';
import { QuotaReads } from './quota-reads.js';
import { RateLimitStore } from './rate-limit.store.js';
import {
  ConsumeResult,
  PeekResult,
  rateLimitHeaders,
  RateLimitHeaders,
  retryAfterSeconds,
  WindowSpec,
} from './rate-limit.windows.js';

/** Who a request is counted against, and at which rates. */
export interface RateLimitSubject extends Limits {
  /** `key:<apiKeyId>` for a valid key, else `ip:<client address>`. */
  id: string;
  /** The key's plan, or `anonymous` for a request counted per address (metrics). */
  plan: string;
}

/**
 * The client address as Express computed it (X-Forwarded-For only through TRUST_PROXY), when it
 * is an address: Express takes whatever text the trusted hop's X-Forwarded-For entry holds, and
 * text that is no address (a forgery the balancer passed on, a `host:port`) would make every
 * request a client of its own, never limited; then the socket's address counts.
 * IPv6 addresses count per /64, as @nestjs/throttler does: one host usually holds a whole /64.
 */
export function clientAddress(req: Request): string {
  const claimed = requestIp(req);
  const address = claimed !== undefined && isIP(claimed) !== 0 ? claimed : req.socket?.remoteAddress;
  return normalizeIp(address ?? 'unknown') ?? 'unknown';
}

/** A valid key's subject: its own counters, at its plan's (or its own enterprise) limits. */
export function keySubject(principal: Principal): RateLimitSubject {
  return {
    id: `key:${principal.keyId}`,
    plan: principal.plan,
    perMinute: principal.perMinute,
    perDay: principal.perDay,
  };
}

/** Requests without a valid key: counted per client address at the free plan's rates. */
export function addressSubject(address: string): RateLimitSubject {
  return { id: `ip:${address}`, plan: 'anonymous', ...PLAN_LIMITS.free };
}

/**
 * The windows every subject is counted in, one typed table: a UTC minute and a UTC day, each
 * with the subject's own limit (its key's plan, or the free plan per address). The rate
 * limiter counts with it; THROTTLERS, ThrottlerModule's configuration, is made from it.
 */
export const WINDOWS = [
  { name: 'minute', ttlMs: 60_000, limitOf: (s: Limits) => s.perMinute, words: 'per minute' },
  { name: 'day', ttlMs: 86_400_000, limitOf: (s: Limits) => s.perDay, words: 'per day' },
] as const satisfies readonly { name: string; ttlMs: number; limitOf: (s: Limits) => number; words: string }[];

/** A subject's windows with their limits, as the store counts them. */
export function windowsOf(subject: Limits): WindowSpec[] {
  return WINDOWS.map((w) => ({ name: w.name, ttlMs: w.ttlMs, limit: w.limitOf(subject) }));
}

/**
 * The windows as ThrottlerModule's named throttlers, where the plan limits are configured for
 * @nestjs/throttler: each limit is that of the subject admission recorded in the request
 * context (the free plan's before admission). Only @nestjs/throttler's own guard and
 * decorators would call these functions; the service counts with RateLimiter, which takes the
 * subject as an argument.
 */
export const THROTTLERS: ThrottlerOptions[] = WINDOWS.map((w) => ({
  name: w.name,
  ttl: w.ttlMs,
  limit: (context: ExecutionContext) =>
    w.limitOf(requestContext(context.switchToHttp().getRequest<Request>()).admission?.subject ?? PLAN_LIMITS.free),
}));

const WINDOW_WORDS: Record<string, string> = Object.fromEntries(WINDOWS.map((w) => [w.name, w.words]));

/** One request counted against its subject: the store's decision, the headers, and the 429 if refused. */
export interface RateLimitDecision {
  result: ConsumeResult;
  /** The instant the request was counted at (Unix milliseconds, from the Clock). */
  nowMs: number;
  headers: RateLimitHeaders;
  refusal?: ApiError;
}

/** A subject's quota as read at `nowMs` without counting (GET /v1/rate_limit), with the headers that describe it. */
export interface QuotaRead extends PeekResult {
  nowMs: number;
  headers: RateLimitHeaders;
}

/**
 * Counts requests against their subject in every window of WINDOWS, with one call of the
 * service's RateLimitStore (ThrottlerModule's storage: at most one Redis round trip for both
 * windows and the ban), and says what the headers and 429s of docs/api.md ("Rate limits") say
 * about it.
 */
@Injectable()
export class RateLimiter {
  private readonly reads = new QuotaReads();

  constructor(
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
    @Inject(rateLimitConfig.token) private readonly config: RateLimitConfig,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Counts one request against `subject`, in the subject's windows: at once when the store
   * decides without I/O (a lease, the memory store), else once its round trip is over.
   */
  count(subject: RateLimitSubject): RateLimitDecision | Promise<RateLimitDecision> {
    const windows = windowsOf(subject);
    const nowMs = this.clock.now().getTime();
    const result = this.store.consume({
      subject: subject.id,
      nowMs,
      windows,
      banThreshold: this.config.rateLimitBanThreshold,
      banMs: this.config.rateLimitBanSeconds * 1000,
    });
    return result instanceof Promise
      ? result.then((r) => this.decision(r, nowMs, subject))
      : this.decision(result, nowMs, subject);
  }

  private decision(result: ConsumeResult, nowMs: number, subject: RateLimitSubject): RateLimitDecision {
    const decision: RateLimitDecision = { result, nowMs, headers: rateLimitHeaders(result, nowMs) };
    if (result.outcome !== 'allowed') {
      decision.refusal = this.refusal(result, nowMs, subject);
      this.metrics.rateLimitRejected(subject.plan, decision.refusal.code as RateLimitRejection);
      if (result.banStarted) this.metrics.rateLimitBanStarted(subject.plan);
    }
    return decision;
  }

  /**
   * Takes one read of the subject's quota from its budget of uncounted reads (QuotaReads): the
   * 429 when the budget is spent, else undefined. No I/O, and nothing counted in the windows.
   */
  admitRead(subject: RateLimitSubject): ApiError | undefined {
    const retryAfter = this.reads.take(subject.id, this.clock.now().getTime());
    if (retryAfter === 0) return undefined;
    return new ApiError(
      'rate_limit_exceeded',
      `Too many reads of this API key's rate limits this minute (at most ${this.reads.perMinute}); retry after ${retryAfter} seconds.`,
      { headers: { 'Retry-After': String(retryAfter) } },
    );
  }

  /**
   * The subject's windows and ban as its next counted request would find them, counting
   * nothing, and the rate-limit headers that describe them (X-RateLimit-Remaining is what is
   * left before that request).
   */
  async read(subject: RateLimitSubject): Promise<QuotaRead> {
    const windows = windowsOf(subject);
    const nowMs = this.clock.now().getTime();
    const peeked = await this.store.peek({
      subject: subject.id,
      nowMs,
      windows,
      banThreshold: this.config.rateLimitBanThreshold,
      banMs: this.config.rateLimitBanSeconds * 1000,
    });
    const banned = peeked.bannedUntilMs !== undefined;
    const headers = rateLimitHeaders({ outcome: banned ? 'banned' : 'allowed', ...peeked }, nowMs);
    return { ...peeked, nowMs, headers };
  }

  private refusal(result: ConsumeResult, nowMs: number, subject: RateLimitSubject): ApiError {
    const retryAfter = retryAfterSeconds(result, nowMs);
    const headers = { 'Retry-After': String(retryAfter) };
    const who = subject.id.startsWith('key:')
      ? 'this API key'
      : 'this client address (requests without a valid API key)';
    if (result.outcome === 'banned') {
      return new ApiError(
        'api_key_temporarily_banned',
        `Too many requests were sent while rate limited: ${who} is banned for ${retryAfter} more seconds.`,
        { headers },
      );
    }
    const exhausted = result.windows
      .filter((w) => w.count >= w.limit)
      .map((w) => `${w.limit} requests ${WINDOW_WORDS[w.name] ?? `per ${w.name}`}`);
    return new ApiError(
      'rate_limit_exceeded',
      `Rate limit exceeded for ${who} (${exhausted.join(', ')}); retry after ${retryAfter} seconds.`,
      { headers },
    );
  }
}
