import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors/api-error.js';
import { requestContext } from '../http/request-context.js';
import { apiKeysConfig, type ApiKeysConfig } from '../config/api-keys.config.js';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { hashesEqual, memoizedKeyHasher } from './api-key-format.js';
import { ApiKeysService, StoredApiKey } from './api-keys.service.js';
import type { AuthResult, Principal } from './auth.types.js';

const RESULT = Symbol('animal-store.auth.result');
const PRECHECK = Symbol('animal-store.auth.precheck');
const HASH = Symbol('animal-store.auth.hash');

type AuthRequest = Request & {
  [RESULT]?: AuthResult | Promise<AuthResult>;
  [PRECHECK]?: Precheck;
  [HASH]?: string;
};

/**
 * What a request's credentials are without asking the database (AuthService.precheck): the
 * result when none is needed, else whether the key is one this instance has found before
 * (`known`: its cached lookup expired) or not (`unknown`: as far as this instance can tell, a
 * guess until the database says otherwise).
 */
export type Precheck = AuthResult | 'known' | 'unknown';

/** `last_used_at` is written at most this often per key and instance. */
export const TOUCH_INTERVAL_MS = 60_000;
/** Keys remembered per cache; beyond that the least recently used are dropped. */
const CACHE_MAX = 10_000;
/**
 * Lookups of unknown keys waiting for a connection, beyond which more are refused (503) at
 * once. The number running at once is half the pool (see the constructor).
 */
const UNKNOWN_LOOKUP_QUEUE = 100;

/** The authenticated caller of a request, once AuthService.resolve has accepted its key. */
export function principalOf(req: Request): Principal | undefined {
  return requestContext(req).principal as Principal | undefined;
}

/**
 * Checks the bearer API key of a request. The rate-limit guard (to key its counters) and the
 * BearerAuthGuard (to refuse) both call resolve(); the check runs once per request.
 *
 * Lookups are cached in process for API_KEY_CACHE_TTL_MS (< 5 s): a hot key costs no database
 * round trip, and a key revoked by any instance or by the key tool is refused everywhere once
 * the entry expires. Unknown keys are cached too (separately, so they cannot evict live keys),
 * and concurrent lookups of one key share a single query.
 *
 * Key guessing: a well-formed key is cheap to forge (the checksum is public), so a key this
 * instance has never found is a guess until the database says otherwise. The rate limiter asks
 * precheck() first and counts such a request against the client's address before the lookup
 * (a limited or banned address gets its 429 without one); and at most half the connection pool
 * serves lookups of unknown keys at any moment, so guesses from many addresses cannot take the
 * connections valid requests need. Keys found before are remembered (hash only, LRU) beyond the
 * cache TTL, so their periodic re-check is never held up by the address's limit or that bound.
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
  /** The hash of a well-formed key, null for a malformed one (memoised). */
  private readonly hash: (key: string) => string | null;
  /** Hashes the database returned a key for (valid or revoked): lookups of these are no guesses. */
  private readonly known = new LRUCache<string, true>({ max: CACHE_MAX });
  private readonly unknownLookups: Semaphore;

  constructor(
    private readonly keys: ApiKeysService,
    @Inject(apiKeysConfig.token) config: ApiKeysConfig,
    @Inject(databaseConfig.token) database: DatabaseConfig,
  ) {
    const ttl = config.apiKeyCacheTtlMs;
    if (ttl > 0) {
      this.found = new LRUCache({ max: CACHE_MAX, ttl });
      this.missing = new LRUCache({ max: CACHE_MAX, ttl });
    }
    keys.onKeyChanged((hash) => this.forget(hash));
    this.hash = memoizedKeyHasher(config.apiKeyPepper, CACHE_MAX);
    this.unknownLookups = new Semaphore(Math.max(1, Math.floor(database.dbPoolMax / 2)), UNKNOWN_LOOKUP_QUEUE);
  }

  /**
   * The request's credentials as far as they can be judged without the database (no header, a
   * malformed key, a cached lookup), else whether its key is `known` or `unknown` (see
   * Precheck). A settled result is memoised for resolve(), so a cached key costs no more than
   * resolve() alone.
   */
  precheck(req: Request): Precheck {
    const r = req as AuthRequest;
    return (r[PRECHECK] ??= this.judgeOffline(r));
  }

  /**
   * The outcome of the request's credentials, computed once and memoised on the request.
   * Bad credentials are a result ({ok: false}), never an exception; only a failing database
   * rejects (the exception filter answers 503 for an unreachable one).
   */
  resolve(req: Request): AuthResult | Promise<AuthResult> {
    const r = req as AuthRequest;
    const known = r[RESULT];
    if (known !== undefined) return known;
    const pre = this.precheck(req);
    // Judged without the database (a cached key, refused credentials): synchronous, so the
    // guards that call this need not await.
    if (typeof pre !== 'string') return (r[RESULT] = pre);
    const hash = r[HASH] as string;
    const settled = this.lookup(hash).then((stored) => {
      const result = this.judge(stored, hash);
      if (result.ok) requestContext(r).principal = result.principal;
      return (r[RESULT] = result);
    });
    r[RESULT] = settled;
    return settled;
  }

  /** The hash of the request's key once precheck() found it `known` or `unknown`, else undefined. */
  keyHash(req: Request): string | undefined {
    return (req as AuthRequest)[HASH];
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

  private judgeOffline(r: AuthRequest): Precheck {
    const parsed = parseHeader(r.headers.authorization);
    if (typeof parsed !== 'string') return parsed;
    const hash = this.hash(parsed);
    if (hash === null) return refuse('invalid_api_key', 'The API key is malformed; check that it was copied completely.');
    const hit = this.found?.get(hash);
    if (hit) {
      const result = this.judge(hit, hash);
      if (result.ok) requestContext(r).principal = result.principal;
      return result;
    }
    if (this.missing?.has(hash)) return judge(null, hash);
    r[HASH] = hash;
    return this.known.has(hash) ? 'known' : 'unknown';
  }

  /** The outcome of a lookup; a found key is recorded in use. */
  private judge(stored: StoredApiKey | null, hash: string): AuthResult {
    const result = judge(stored, hash);
    if (result.ok && stored) this.touch(stored);
    return result;
  }

  private lookup(hash: string): Promise<StoredApiKey | null> {
    const hit = this.found?.get(hash);
    if (hit) return Promise.resolve(hit);
    if (this.missing?.has(hash)) return Promise.resolve(null);
    let pending = this.inflight.get(hash);
    if (!pending) {
      const generation = this.generation;
      pending = this.query(hash).finally(() => this.inflight.delete(hash));
      pending.then(
        (stored) => {
          if (stored) this.known.set(hash, true);
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

  /** One lookup; those of unknown keys share half the pool and a bounded queue. */
  private query(hash: string): Promise<StoredApiKey | null> {
    if (this.known.has(hash)) return this.keys.findByHash(hash);
    return this.unknownLookups.run(() => this.keys.findByHash(hash), BUSY);
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

/** The bearer credential of an Authorization header (its form is checked by the hasher), or the refusal; never a lookup. */
function parseHeader(header: string | undefined): string | AuthResult {
  // The messages never include what was presented: it may be a real key sent to the wrong place.
  if (header === undefined || header.trim() === '') {
    return refuse('missing_api_key', 'An API key is required: send it as "Authorization: Bearer <key>".');
  }
  const match = /^\s*(\S+)(?:\s+(\S+))?\s*$/.exec(header);
  if (!match || match[1].toLowerCase() !== 'bearer' || match[2] === undefined) {
    return refuse('invalid_api_key', 'The Authorization header must be "Bearer <key>" with an API key.');
  }
  return match[2];
}

function judge(stored: StoredApiKey | null, hash: string): AuthResult {
  if (!stored || !hashesEqual(stored.hash, hash) || stored.revokedAt !== null) {
    return refuse('invalid_api_key', 'The API key is not valid: it is unknown or has been revoked.');
  }
  return {
    ok: true,
    principal: { keyId: stored.id.toString(), plan: stored.plan, perMinute: stored.perMinute, perDay: stored.perDay },
  };
}

/** What a lookup of an unknown key gets while too many are waiting already. */
const BUSY = (): ApiError =>
  new ApiError(503, 'service_unavailable', 'Too many unrecognised API keys are being checked right now; retry shortly.', undefined, {
    'Retry-After': '1',
  });

/**
 * At most `limit` tasks at once; up to `queue` more wait their turn, and beyond that run()
 * rejects at once with `busy()`, so a flood holds neither connections nor unbounded memory.
 */
class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly queue: number,
  ) {}

  async run<T>(task: () => Promise<T>, busy: () => Error): Promise<T> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.queue) throw busy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter, or give it back.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
