import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { isIP } from 'node:net';
import { declaredAuthMode } from '../auth/auth-mode.js';
import { AuthService } from '../auth/auth.service.js';
import type { AuthResult, Principal } from '../auth/auth.types.js';
import type { Limits } from '../auth/plans.js';
import { PLAN_LIMITS } from '../auth/plans.js';
import { MetricsService, RateLimitRejection } from '../metrics/metrics.service.js';
import { ApiError } from '../errors/api-error.js';
import { Clock } from '../time/clock.js';
import { rateLimitConfig, type RateLimitConfig } from '../config/rate-limit.config.js';
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
 * The client address as Express computed it (X-Forwarded-For only through TRUST_PROXY), when it
 * is an address: Express takes whatever text the trusted hop's X-Forwarded-For entry holds, and
 * text that is no address (a forgery the balancer passed on, a `host:port`) would make every
 * request a client of its own, never limited; then the socket's address counts.
 * IPv6 addresses count per /64, as @nestjs/throttler does: one host usually holds a whole /64.
 */
export function clientAddress(req: Request): string {
  const claimed = req.ip;
  const address = claimed !== undefined && isIP(claimed) !== 0 ? claimed : req.socket?.remoteAddress;
  return normalizeIp(address ?? 'unknown') ?? 'unknown';
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
 * Plan rate limits: the guard of ThrottlerModule's configuration (its named throttlers and its
 * storage, our store), whose throttlers are all decided by one storage call (at most one Redis
 * round trip), counted per API key across all routes, with the contract's headers
 * (`X-RateLimit-Limit`, `-Remaining`, `-Reset` in epoch seconds, for the window closest to
 * exhaustion, and the IETF `RateLimit-Policy` and `RateLimit` saying the same) instead of the
 * stock per-throttler ones, and 429s through ApiError.
 *
 * Registered globally before BearerAuthGuard, so a 401 is counted (per address) and carries
 * the headers too; the headers are on the response before anything later can fail, and the
 * exception filter keeps them.
 *
 * It implements CanActivate itself rather than extending ThrottlerGuard, whose canActivate is
 * asynchronous by signature and resolves each throttler's limit with an await per request:
 * this one answers synchronously whenever it can (README, "Performance").
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly throttlers: ThrottlerOptions[];
  /**
   * The keys whose first request is being counted and looked up, each with whether it found the
   * key valid. One entry per distinct key in flight, removed when its request is decided.
   */
  private readonly firstRequests = new Map<string, Promise<boolean>>();

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() private readonly store: RateLimitStore,
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
    private readonly clock: Clock,
    @Inject(rateLimitConfig.token) private readonly config: RateLimitConfig,
    private readonly metrics: MetricsService,
  ) {
    this.throttlers = Array.isArray(options) ? options : options.throttlers;
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (declaredAuthMode(this.reflector, context.getHandler(), context.getClass()) === 'public') return true;
    const pending = this.limit(context);
    return pending === undefined ? true : pending.then(() => true);
  }

  /**
   * Counts the request once (a second call for the same request does nothing), sets the
   * headers, and throws the 429; a failing credential check (database down) is rethrown
   * after the request was counted per address, never turned into a 429.
   *
   * A key this instance has never found is counted against the client's address before it is
   * looked up, so an address over its limit (or banned) is refused without a database query,
   * whatever key it sends, and guessing costs at most the address's limit in lookups. Should the
   * key turn out valid, the request is counted against the key too (once per key and instance:
   * from then on the key is known). Every other request is counted once, as before: a cached
   * key against itself with no extra work, a known key after its re-check, the rest per address.
   */
  limit(context: ExecutionContext): Promise<void> | undefined {
    const req = context.switchToHttp().getRequest<LimitedRequest>();
    if (req[COUNTED]) return undefined;
    req[COUNTED] = true;

    const pre = this.auth.precheck(req);
    if (pre === 'unknown') return this.limitGuess(context, req);
    if (pre === 'known') {
      const auth = this.auth.resolve(req);
      return Promise.resolve(auth).then(
        (a) => this.settle(context, req, a, undefined),
        (err: unknown) => this.settle(context, req, undefined, err),
      );
    }
    // Judged without I/O (a cached key, or refused credentials): synchronous when the store
    // can decide locally too.
    return this.settle(context, req, pre, undefined);
  }

  /**
   * A key this instance has never found: the address first, then the lookup, then the key.
   *
   * Requests with the same key that arrive while its first one is being counted and looked up
   * wait for it: a client opening 100 connections to a fresh instance (after a deploy) sends 100
   * first requests at once, and counting each against its address would refuse a valid
   * enterprise key with 429s and then ban its address. If the first finds the key valid, they
   * are counted against the key alone, with no lookup of their own (the result is shared). If
   * not (an unknown key, an address over its limit, the database down), each goes the guess's
   * way itself, so waiting never lets a guess skip its count.
   */
  private async limitGuess(context: ExecutionContext, req: LimitedRequest): Promise<void> {
    const hash = this.auth.keyHash(req) as string;
    const first = this.firstRequests.get(hash);
    if (first !== undefined && (await first)) {
      let auth: AuthResult;
      try {
        auth = await this.auth.resolve(req);
      } catch (err) {
        return this.settle(context, req, undefined, err);
      }
      return this.settle(context, req, auth, undefined);
    }
    let found: (valid: boolean) => void = () => {};
    if (first === undefined) this.firstRequests.set(hash, new Promise<boolean>((resolve) => (found = resolve)));
    let valid = false;
    try {
      await this.count(context, this.addressSubject(req), 'anonymous');
      const auth = await this.auth.resolve(req); // a failure is the 503, already counted per address
      valid = auth.ok;
      if (auth.ok) await this.count(context, this.keySubject(auth.principal), auth.principal.plan);
    } finally {
      if (first === undefined) {
        this.firstRequests.delete(hash);
        found(valid);
      }
    }
  }

  /** Counts a request whose credentials are judged (or could not be checked: `deferred`). */
  private settle(context: ExecutionContext, req: LimitedRequest, auth: AuthResult | undefined, deferred: unknown): Promise<void> | undefined {
    if (auth?.ok) return this.count(context, this.keySubject(auth.principal), auth.principal.plan);
    // Credentials that could not be checked (database down): the request is counted against
    // its address for the headers, but the answer is the 503. A 429 would blame the client
    // for a limit that is not its own (its key may be on any plan).
    const counted = this.count(context, this.addressSubject(req), 'anonymous', deferred === undefined);
    if (deferred === undefined) return counted;
    if (counted === undefined) throw deferred;
    return counted.then(() => {
      throw deferred;
    });
  }

  private keySubject(principal: Principal): RateLimitSubject {
    return { id: `key:${principal.keyId}`, perMinute: principal.perMinute, perDay: principal.perDay };
  }

  private addressSubject(req: Request): RateLimitSubject {
    return { id: `ip:${clientAddress(req)}`, ...PLAN_LIMITS.free };
  }

  /**
   * Counts the request against `subject`, sets the headers, and throws the 429 if refused (and
   * `refuse`). Synchronous when the store decides without I/O (memory, or a Redis lease).
   */
  private count(context: ExecutionContext, subject: RateLimitSubject, plan: string, refuse = true): Promise<void> | undefined {
    const req = context.switchToHttp().getRequest<LimitedRequest>();
    req[SUBJECT] = subject;
    const decide = (windows: WindowSpec[]): Promise<void> | undefined => {
      const nowMs = this.clock.now().getTime();
      const result = this.store.consume({
        subject: subject.id,
        nowMs,
        windows,
        banThreshold: this.config.rateLimitBanThreshold,
        banMs: this.config.rateLimitBanSeconds * 1000,
      });
      const res = context.switchToHttp().getResponse<Response>();
      if (result instanceof Promise) return result.then((r) => this.conclude(res, r, nowMs, subject, plan, refuse));
      this.conclude(res, result, nowMs, subject, plan, refuse);
      return undefined;
    };
    const windows = this.windows(context);
    return windows instanceof Promise ? windows.then(decide) : decide(windows);
  }

  /** Sets the headers of a decided request and throws its refusal, if any (and `refuse`). */
  private conclude(res: Response, result: ConsumeResult, nowMs: number, subject: RateLimitSubject, plan: string, refuse: boolean): void {
    const headers = rateLimitHeaders(result, nowMs);
    res.setHeader('X-RateLimit-Limit', headers['X-RateLimit-Limit']);
    res.setHeader('X-RateLimit-Remaining', headers['X-RateLimit-Remaining']);
    res.setHeader('X-RateLimit-Reset', headers['X-RateLimit-Reset']);
    res.setHeader('RateLimit-Policy', headers['RateLimit-Policy']);
    res.setHeader('RateLimit', headers.RateLimit);
    if (refuse && result.outcome !== 'allowed') {
      const refusal = this.refusal(result, nowMs, subject);
      this.metrics.rateLimitRejected(plan, refusal.code as RateLimitRejection);
      throw refusal;
    }
  }

  /**
   * The request's windows from the named throttlers. Their ttl and limit may be functions of
   * the request, and @nestjs/throttler allows those to be async; ours are synchronous, and
   * then so is this.
   */
  private windows(context: ExecutionContext): WindowSpec[] | Promise<WindowSpec[]> {
    const specs: WindowSpec[] = [];
    let pending: Promise<unknown>[] | undefined;
    for (const throttler of this.throttlers) {
      const spec: WindowSpec = { name: throttler.name as string, ttlMs: 0, limit: 0 };
      for (const field of ['ttl', 'limit'] as const) {
        const value = throttler[field];
        const n = typeof value === 'function' ? value(context) : value;
        const store = (v: number) => {
          if (!Number.isSafeInteger(v) || v < 0) throw new Error(`throttler ${throttler.name}: not a count: ${v}`);
          if (field === 'ttl') spec.ttlMs = v;
          else spec.limit = v;
        };
        if (n instanceof Promise) (pending ??= []).push(n.then(store));
        else store(n);
      }
      specs.push(spec);
    }
    return pending ? Promise.all(pending).then(() => specs) : specs;
  }

  private refusal(result: ConsumeResult, nowMs: number, subject: RateLimitSubject): ApiError {
    const retryAfter = retryAfterSeconds(result, nowMs);
    const headers = { 'Retry-After': String(retryAfter) };
    const who = subject.id.startsWith('key:') ? 'this API key' : 'this client address (requests without a recognised API key)';
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
