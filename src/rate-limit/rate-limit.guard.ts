import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { declaredAuthMode } from '../auth/auth-mode.js';
import { AuthService } from '../auth/auth.service.js';
import type { Limits } from '../auth/plans.js';
import { PLAN_LIMITS } from '../auth/plans.js';
import { MetricsService, RateLimitRejection } from '../metrics/metrics.service.js';
import { ApiError } from '../common/api-error.js';
import { Clock } from '../common/clock.js';
import type { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { RateLimitStore } from './rate-limit.store.js';
import { ConsumeResult, rateLimitHeaders, retryAfterSeconds, WindowSpec } from './rate-limit.windows.js';

/** Who a request is counted against, and at which rates. */
export interface RateLimitSubject extends Limits {
  /** `key:<apiKeyId>` for a valid key, else `ip:<client address>`. */
  id: string;
}

const SUBJECT = Symbol('animal-store.rate-limit.subject');
const COUNTED = Symbol('animal-store.rate-limit.counted');

type LimitedRequest = Request & { [SUBJECT]?: RateLimitSubject; [COUNTED]?: boolean };

/** The subject of a request being limited; the free plan's rates until it is known. */
export function subjectOf(context: ExecutionContext): RateLimitSubject {
  const req = context.switchToHttp().getRequest<LimitedRequest>();
  return req[SUBJECT] ?? { id: `ip:${clientAddress(req)}`, ...PLAN_LIMITS.free };
}

/**
 * The client address as Express computed it (X-Forwarded-For only through TRUST_PROXY).
 * IPv6 addresses count per /64, as @nestjs/throttler does: one host usually holds a whole /64.
 */
export function clientAddress(req: Request): string {
  return normalizeIp(req.ip ?? req.socket?.remoteAddress ?? 'unknown') ?? 'unknown';
}

/**
 * The two named throttlers of ThrottlerModule: a UTC minute and a UTC day, whose limits are
 * those of the request's subject (the key's plan, or the free plan per address).
 */
export const THROTTLERS: ThrottlerOptions[] = [
  { name: 'minute', ttl: 60_000, limit: (context) => subjectOf(context).perMinute },
  { name: 'day', ttl: 86_400_000, limit: (context) => subjectOf(context).perDay },
];

const WINDOW_WORDS: Record<string, string> = { minute: 'per minute', day: 'per day' };

/**
 * Plan rate limits: a ThrottlerGuard whose named throttlers are all decided by one storage
 * call (one Redis round trip), counted per API key across all routes, with the contract's
 * headers (`X-RateLimit-Limit`, `-Remaining`, `-Reset` in epoch seconds, for the window closest
 * to exhaustion) instead of the stock per-throttler ones, and 429s through ApiError.
 *
 * Registered globally before BearerAuthGuard, so a 401 is counted (per address) and carries
 * the headers too; the headers are on the response before anything later can fail, and the
 * exception filter keeps them.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() private readonly store: RateLimitStore,
    reflector: Reflector,
    private readonly auth: AuthService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    super(options, store, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (declaredAuthMode(this.reflector, context.getHandler(), context.getClass()) === 'public') return true;
    await this.limit(context);
    return true;
  }

  /**
   * Counts the request once (a second call for the same request does nothing), sets the
   * headers, and throws the 429; a failing credential check (database down) is rethrown
   * after the request was counted per address, never turned into a 429.
   */
  async limit(context: ExecutionContext): Promise<void> {
    const req = context.switchToHttp().getRequest<LimitedRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    if (req[COUNTED]) return;
    req[COUNTED] = true;

    let deferred: unknown;
    let subject: RateLimitSubject;
    let plan = 'anonymous';
    try {
      const auth = await this.auth.resolve(req);
      if (auth.ok) plan = auth.principal.plan;
      subject = auth.ok
        ? { id: `key:${auth.principal.keyId}`, perMinute: auth.principal.perMinute, perDay: auth.principal.perDay }
        : { id: `ip:${clientAddress(req)}`, ...PLAN_LIMITS.free };
    } catch (err) {
      deferred = err;
      subject = { id: `ip:${clientAddress(req)}`, ...PLAN_LIMITS.free };
    }
    req[SUBJECT] = subject;

    const windows = await Promise.all(this.throttlers.map((t) => this.window(context, t)));
    const nowMs = this.clock.now().getTime();
    const result = await this.store.consume({
      subject: subject.id,
      nowMs,
      windows,
      banThreshold: this.config.rateLimitBanThreshold,
      banMs: this.config.rateLimitBanSeconds * 1000,
    });
    for (const [name, value] of Object.entries(rateLimitHeaders(result))) res.setHeader(name, value);
    // Credentials that could not be checked (database down): the request was counted against
    // its address for the headers, but the answer is the 503. A 429 would blame the client
    // for a limit that is not its own (its key may be on any plan).
    if (deferred !== undefined) throw deferred;
    if (result.outcome !== 'allowed') {
      const refusal = this.refusal(result, nowMs, subject);
      this.metrics.rateLimitRejected(plan, refusal.code as RateLimitRejection);
      throw refusal;
    }
  }

  private async window(context: ExecutionContext, throttler: ThrottlerOptions): Promise<WindowSpec> {
    const resolve = async (value: ThrottlerOptions['ttl']): Promise<number> => {
      const n = typeof value === 'function' ? await value(context) : value;
      if (!Number.isSafeInteger(n) || n < 0) throw new Error(`throttler ${throttler.name}: not a count: ${n}`);
      return n;
    };
    return { name: throttler.name as string, ttlMs: await resolve(throttler.ttl), limit: await resolve(throttler.limit) };
  }

  private refusal(result: ConsumeResult, nowMs: number, subject: RateLimitSubject): ApiError {
    const retryAfter = retryAfterSeconds(result, nowMs);
    const headers = { 'Retry-After': String(retryAfter) };
    const who = subject.id.startsWith('key:') ? 'this API key' : 'this client address (no valid API key)';
    if (result.outcome === 'banned') {
      return new ApiError(
        429,
        'api_key_temporarily_banned',
        `Too many requests were sent while rate limited: ${who} is banned for ${retryAfter} more seconds.`,
        undefined,
        headers,
      );
    }
    const exhausted = result.windows.filter((w) => w.count >= w.limit).map((w) => `${w.limit} requests ${WINDOW_WORDS[w.name] ?? `per ${w.name}`}`);
    return new ApiError(
      429,
      'rate_limit_exceeded',
      `Rate limit exceeded for ${who} (${exhausted.join(', ')}); retry after ${retryAfter} seconds.`,
      undefined,
      headers,
    );
  }
}
