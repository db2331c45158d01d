import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import { ApiError } from '../common/api-error.js';
import type { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { hashApiKey, hashesEqual, isWellFormedApiKey } from './api-key-format.js';
import { ApiKeysService, StoredApiKey } from './api-keys.service.js';
import type { AuthResult, Principal } from './auth.types.js';

const RESULT = Symbol('animal-store.auth.result');
const PRINCIPAL = Symbol('animal-store.auth.principal');

type AuthRequest = Request & { [RESULT]?: Promise<AuthResult>; [PRINCIPAL]?: Principal };

/** `last_used_at` is written at most this often per key and instance. */
export const TOUCH_INTERVAL_MS = 60_000;
/** Keys remembered per cache; beyond that the least recently used are dropped. */
const CACHE_MAX = 10_000;

/** The authenticated caller of a request, once AuthService.resolve has accepted its key. */
export function principalOf(req: Request): Principal | undefined {
  return (req as AuthRequest)[PRINCIPAL];
}

/**
 * Checks the bearer API key of a request. The rate-limit guard (to key its counters) and the
 * BearerAuthGuard (to refuse) both call resolve(); the check runs once per request.
 *
 * Lookups are cached in process for API_KEY_CACHE_TTL_MS (< 5 s): a hot key costs no database
 * round trip, and a key revoked by any instance or by the key tool is refused everywhere once
 * the entry expires. Unknown keys are cached too (separately, so they cannot evict live keys),
 * and concurrent lookups of one key share a single query.
 */
@Injectable()
export class AuthService implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Auth');
  private readonly found?: LRUCache<string, StoredApiKey>;
  private readonly missing?: LRUCache<string, true>;
  private readonly inflight = new Map<string, Promise<StoredApiKey | null>>();
  /** Bumped on local invalidation, so a lookup already in flight does not re-cache stale data. */
  private generation = 0;
  private readonly lastTouched = new LRUCache<string, number>({ max: CACHE_MAX });
  private readonly touches = new Set<Promise<void>>();

  constructor(
    private readonly keys: ApiKeysService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    const ttl = config.apiKeyCacheTtlMs;
    if (ttl > 0) {
      this.found = new LRUCache({ max: CACHE_MAX, ttl });
      this.missing = new LRUCache({ max: CACHE_MAX, ttl });
    }
    keys.onKeyChanged((hash) => this.forget(hash));
  }

  /**
   * The outcome of the request's credentials, computed once and memoised on the request.
   * Bad credentials are a result ({ok: false}), never an exception; only a failing database
   * rejects (the exception filter answers 503 for an unreachable one).
   */
  resolve(req: Request): Promise<AuthResult> {
    const r = req as AuthRequest;
    r[RESULT] ??= this.check(req.headers.authorization).then((result) => {
      if (result.ok) r[PRINCIPAL] = result.principal;
      return result;
    });
    return r[RESULT];
  }

  /** Drops a key's cached lookup (it was revoked or re-planned by this process). */
  forget(hash: string): void {
    this.generation += 1;
    this.found?.delete(hash);
    this.missing?.delete(hash);
    this.inflight.delete(hash);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.touches]);
  }

  private async check(header: string | undefined): Promise<AuthResult> {
    // The messages never include what was presented: it may be a real key sent to the wrong place.
    if (header === undefined || header.trim() === '') {
      return refuse('missing_api_key', 'An API key is required: send it as "Authorization: Bearer <key>".');
    }
    const match = /^\s*(\S+)(?:\s+(\S+))?\s*$/.exec(header);
    if (!match || match[1].toLowerCase() !== 'bearer' || match[2] === undefined) {
      return refuse('invalid_api_key', 'The Authorization header must be "Bearer <key>" with an API key.');
    }
    const key = match[2];
    if (!isWellFormedApiKey(key)) {
      return refuse('invalid_api_key', 'The API key is malformed; check that it was copied completely.');
    }
    const hash = hashApiKey(key, this.config.apiKeyPepper);
    const stored = await this.lookup(hash);
    if (!stored || !hashesEqual(stored.hash, hash) || stored.revokedAt !== null) {
      return refuse('invalid_api_key', 'The API key is not valid: it is unknown or has been revoked.');
    }
    this.touch(stored);
    return {
      ok: true,
      principal: { keyId: stored.id.toString(), plan: stored.plan, perMinute: stored.perMinute, perDay: stored.perDay },
    };
  }

  private lookup(hash: string): Promise<StoredApiKey | null> {
    if (!this.found || !this.missing) return this.keys.findByHash(hash);
    const hit = this.found.get(hash);
    if (hit) return Promise.resolve(hit);
    if (this.missing.has(hash)) return Promise.resolve(null);
    let pending = this.inflight.get(hash);
    if (!pending) {
      const generation = this.generation;
      pending = this.keys.findByHash(hash).finally(() => this.inflight.delete(hash));
      pending.then(
        (stored) => {
          if (generation !== this.generation) return;
          if (stored) this.found?.set(hash, stored);
          else this.missing?.set(hash, true);
        },
        () => {}, // the caller sees the error; nothing is cached
      );
      this.inflight.set(hash, pending);
    }
    return pending;
  }

  /** Records use in `last_used_at`, at most once a minute per key; never delays the request. */
  private touch(stored: StoredApiKey): void {
    const id = stored.id.toString();
    const now = Date.now();
    const last = this.lastTouched.get(id) ?? stored.lastUsedAt?.getTime() ?? 0;
    if (now - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(id, now);
    const done = this.keys
      .touch(stored.id)
      .catch((err: unknown) => this.logger.warn(`could not record use of API key ${id}: ${(err as Error)?.message ?? err}`))
      .finally(() => this.touches.delete(done));
    this.touches.add(done);
  }
}

function refuse(code: 'missing_api_key' | 'invalid_api_key', message: string): AuthResult {
  return { ok: false, error: new ApiError(401, code, message) };
}
