import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors/api-error.js';
import { apiKeysConfig, type ApiKeysConfig } from '../config/api-keys.config.js';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { Clock } from '../time/clock.js';
import { apiKeyVersion, hashApiKey, type ApiKeyVersion } from '../api-keys/api-key-format.js';
import { ApiKeyCache, CACHE_MAX, cacheClock } from './api-key-cache.js';
import { ApiKeyChangePoller } from './api-key-changes.js';
import { ApiKeysService, StoredApiKey } from '../api-keys/api-keys.service.js';
import { AuthObserver, type ApiKeyRefusalReason, type AuthResult } from './auth.types.js';
import { GuessBudgets } from './guess-budgets.js';
import { LastUsedTimes } from './last-used.js';

/** A well-formed key, as far as it can be judged without I/O. */
interface Credential {
  hash: string;
  version: ApiKeyVersion;
}

type Refusal = Extract<AuthResult, { ok: false }>;

/**
 * Keys used this recently (`last_used_at`, by any instance) are cached before an instance takes
 * traffic: a fresh instance behind a balancer otherwise looks up each key in use on its first
 * request, all within its first seconds, and the lookups queue for the pool with the requests
 * (`BENCH_FRESH_START=1 npm run bench`).
 */
export const WARM_WINDOW_MS = 60 * 60_000;

/**
 * Checks the bearer API key of a request (docs/api-keys.md): the admission service asks it
 * once per request, with the client's address.
 *
 * Without I/O: a missing header, a malformed key, a version 1 key whose CRC fails and a version
 * 2 key whose HMAC tag fails are refused at once. A well-formed key is looked up once, and
 * concurrent lookups of one key share a single query. The outcome stays cached while the
 * instance keeps learning of changes: every API_KEY_CACHE_TTL_MS / 2 it asks the database for
 * the keys changed since its last poll (rolled, re-planned, revoked, by any process) and
 * drops those. A cached outcome is used only while the last successful poll, or the lookup
 * itself, is less than API_KEY_CACHE_TTL_MS old (< 5 s): a key revoked anywhere is refused by
 * every instance within that bound, and when polls fail the cache expires instead.
 *
 * Version 1 keys can be forged by anyone (their checksum is public), so failed lookups of
 * version 1 keys this instance has never found are bounded: an address whose lookups failed
 * API_KEY_FAILED_LOOKUPS_PER_ADDRESS times this minute gets no more until the minute ends, and
 * the instance makes at most API_KEY_UNKNOWN_LOOKUPS_PER_SECOND failed lookups a second (both
 * overshot by fewer than the lookups running at once, half the pool). A version 2 key with a
 * valid tag was issued by this service, so it is always looked up.
 */
@Injectable()
export class AuthService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /**
   * Keys (text) judged well-formed, with their hash: a client sends the same key on every request.
   * Read with peek(), which leaves the order alone (the oldest entries go first): a key pushed out
   * costs one hash again, and a read costs no reordering (bench scenario listPetsManyKeys).
   */
  private readonly credentials = new LRUCache<string, Credential>({ max: CACHE_MAX });
  private readonly cache: ApiKeyCache;
  private readonly changes: ApiKeyChangePoller;
  private readonly guesses: GuessBudgets;
  private readonly lastUsed: LastUsedTimes;
  private readonly logger = new Logger('Auth');

  constructor(
    private readonly keys: ApiKeysService,
    private readonly clock: Clock,
    @Inject(apiKeysConfig.token) private readonly config: ApiKeysConfig,
    @Inject(databaseConfig.token) database: DatabaseConfig,
    @Optional() private readonly observer?: AuthObserver,
  ) {
    this.cache = new ApiKeyCache(
      config.apiKeyCacheTtlMs,
      (hash) => keys.findByHash(hash),
      () => this.observer?.lookup(),
    );
    this.changes = new ApiKeyChangePoller(keys, this.cache);
    keys.onKeyChanged((hash) => this.forget(hash));
    this.guesses = new GuessBudgets(
      config.apiKeyFailedLookupsPerAddress,
      config.apiKeyUnknownLookupsPerSecond,
      Math.max(1, Math.floor(database.dbPoolMax / 2)),
    );
    this.lastUsed = new LastUsedTimes(keys, clock);
  }

  /**
   * The outcome of an Authorization header sent from `address` (or the function that gives it,
   * called only when a guess's budgets need it), in the steps of docs/api-keys.md
   * ("Verification"). Bad credentials are a result ({ok: false}), never an exception; only a
   * failing database, or a full queue of lookups of never-found keys, rejects (both answered 503).
   * The result is returned at once, not as a promise, when no lookup is needed (a refusal
   * without I/O, or a cached lookup): a request then passes admission without waiting on the
   * microtask queue at every step (bench scenario listPetsManyKeys, ledger: event loop).
   */
  verify(header: string | undefined, address: string | (() => string)): AuthResult | Promise<AuthResult> {
    // 1. Parse `Authorization: Bearer <key>`.
    const key = parseHeader(header);
    if (typeof key !== 'string') return key;
    // 2. Check the shape and check value, without I/O.
    const credential = this.credential(key);
    if (credential === null)
      return this.refusal(
        null,
        'malformed',
        'The API key is malformed or forged; check that it was copied completely.',
      );
    // 3. Look the hash up: the cache, else a shared query or a guess within its budgets.
    const cached = this.cache.cached(credential.hash);
    if (cached !== undefined) return this.judge(cached);
    return this.lookUp(credential, address).then((stored) =>
      stored !== null && 'ok' in stored ? stored : this.judge(stored),
    );
  }

  /** Drops a key's cached lookup (it was revoked, rolled or re-planned by this process). */
  forget(hash: string): void {
    this.cache.forget(hash);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.apiKeyCacheTtlMs > 0) await this.warmCache();
    this.changes.start(this.config.apiKeyCacheTtlMs);
  }

  /**
   * Caches the keys used in the last WARM_WINDOW_MS (at most CACHE_MAX) before the instance
   * listens. The first poll of changes comes first: it learns the database's clock, and the next
   * poll reports every change after it (less the overlap), so a key changed after this query
   * read it is dropped like any cached key. A failing query leaves the cache empty: each key
   * is then looked up on its first request, as it would be without this.
   */
  private async warmCache(): Promise<void> {
    await this.changes.pollChanges();
    const at = cacheClock.now();
    try {
      const keys = await this.keys.recentlyUsed(WARM_WINDOW_MS, CACHE_MAX);
      this.cache.warm(keys, at);
      this.logger.log(
        `cached ${keys.length} API key secrets used in the last hour, in ${Math.round(cacheClock.now() - at)} ms`,
      );
    } catch (err) {
      this.logger.warn(
        `could not cache the API keys used in the last hour (each is looked up on its first request): ${(err as Error)?.message ?? err}`,
      );
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.lastUsed.pending(), this.changes.stop()]);
  }

  /** Polls the keys changed since the last poll now (ApiKeyChangePoller.pollChanges). */
  async pollChanges(): Promise<void> {
    await this.changes.pollChanges();
  }

  /** The hash and version of a well-formed key, or null. */
  private credential(key: string): Credential | null {
    let credential = this.credentials.peek(key);
    if (credential === undefined) {
      const version = apiKeyVersion(key, this.config.apiKeyChecksumSecret);
      if (version === null) return null;
      credential = { hash: hashApiKey(key, this.config.apiKeyPepper), version };
      this.credentials.set(key, credential);
    }
    return credential;
  }

  /**
   * The stored key of a well-formed credential the cache does not hold (null: none), or the
   * refusal of a guess over its budgets.
   */
  private async lookUp(
    credential: Credential,
    address: string | (() => string),
  ): Promise<StoredApiKey | null | Refusal> {
    if (credential.version === 2 || this.cache.isKnown(credential.hash)) return this.cache.lookup(credential.hash);
    return this.lookupGuess(credential.hash, typeof address === 'string' ? address : address());
  }

  /**
   * A version 1 key this instance has never found: looked up within the address's and the
   * instance's budgets of failed lookups. Such lookups run on at most half the pool at once
   * (others wait their turn, never refused while the queue has room), and the budgets are
   * checked when a lookup starts and charged when it fails: a valid key costs neither, and
   * concurrent guesses overshoot a budget by fewer than the lookups running at once.
   */
  private async lookupGuess(hash: string, address: string): Promise<StoredApiKey | null | Refusal> {
    return this.guesses.run(async () => {
      // Another request may have looked this key up while this one waited.
      const cached = this.cache.cached(hash);
      if (cached !== undefined) return cached;
      const running = this.cache.running(hash);
      if (running !== undefined) return await running;

      const nowMs = this.clock.now().getTime();
      const failures = this.guesses.check(address, nowMs);
      if (failures === 'address_budget') {
        const retryAfter = String(60 - (Math.floor(nowMs / 1000) % 60));
        const message = `Too many unknown API keys were sent from this client address this minute; its new keys are checked again in ${retryAfter} seconds.`;
        return this.refusal(
          new ApiError('rate_limit_exceeded', message, { headers: { 'Retry-After': retryAfter } }),
          'address_budget',
        );
      }
      if (failures === 'instance_budget') return this.refusal(busy(), 'instance_budget');
      const stored = await this.cache.lookup(hash);
      if (stored === null) this.guesses.charge(failures);
      return stored;
    }, busy);
  }

  /** 4. The outcome of a lookup at the current instant; a key found valid is recorded in use. */
  private judge(stored: StoredApiKey | null): AuthResult {
    if (!stored || stored.revokedAt !== null) {
      return this.refusal(null, 'unknown', 'The API key is not valid: it is unknown or has been revoked.');
    }
    const now = this.clock.now();
    if (stored.expiresAt !== null && stored.expiresAt <= now) {
      return this.refusal(
        new ApiError('api_key_expired', `The API key expired at ${stored.expiresAt.toISOString()}; ask for a new one.`),
        'expired',
      );
    }
    if (stored.previousExpiresAt !== null && stored.previousExpiresAt <= now) {
      const message = `This secret of the API key was replaced by a roll and stopped working at ${stored.previousExpiresAt.toISOString()}; use the new secret.`;
      return this.refusal(new ApiError('api_key_expired', message), 'expired');
    }
    this.lastUsed.record(stored);
    return {
      ok: true,
      principal: {
        keyId: stored.id.toString(),
        plan: stored.plan,
        perMinute: stored.perMinute,
        perDay: stored.perDay,
        scopes: stored.scopes,
      },
    };
  }

  private refusal(error: ApiError | null, reason: ApiKeyRefusalReason, message?: string): Refusal {
    this.observer?.refused(reason);
    return { ok: false, error: error ?? invalid(message as string) };
  }
}

function invalid(message: string): ApiError {
  return new ApiError('invalid_api_key', message);
}

/** The bearer credential of an Authorization header, or the refusal; never a lookup. */
function parseHeader(header: string | undefined): string | AuthResult {
  // The messages never include what was presented: it may be a real key sent to the wrong place.
  if (header === undefined || header.trim() === '') {
    return {
      ok: false,
      error: new ApiError('missing_api_key', 'An API key is required: send it as "Authorization: Bearer <key>".'),
    };
  }
  const match = /^\s*(\S+)(?:\s+(\S+))?\s*$/.exec(header);
  if (!match || match[1].toLowerCase() !== 'bearer' || match[2] === undefined) {
    return { ok: false, error: invalid('The Authorization header must be "Bearer <key>" with an API key.') };
  }
  return match[2];
}

/** What a lookup of a never-found key gets while the instance's bound is spent. */
const busy = (): ApiError =>
  new ApiError('service_unavailable', 'Too many unrecognised API keys are being checked right now; retry shortly.', {
    headers: { 'Retry-After': '1' },
  });
