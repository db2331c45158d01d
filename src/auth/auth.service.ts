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
import { apiKeyVersion, hashApiKey, hashesEqual, type ApiKeyVersion } from './api-key-format.js';
import { ApiKeysService, StoredApiKey } from './api-keys.service.js';
import { AuthObserver, type ApiKeyRefusalReason, type AuthResult } from './auth.types.js';

/** `last_used_at` is written at most this often per key and instance. */
export const TOUCH_INTERVAL_MS = 60_000;
/** Keys remembered per cache; beyond that the least recently used are dropped. */
const CACHE_MAX = 10_000;
/** Lookups of never-found keys waiting for a connection, beyond which more are refused (503) at once. */
const UNKNOWN_LOOKUP_QUEUE = 100;
/**
 * How far back each poll of changed keys looks before the previous poll's instant: a change is
 * stamped when its statement starts and seen once it commits, which this covers with room.
 */
const CHANGE_OVERLAP_MS = 10_000;
/** The cache's clock, read as lru-cache reads it (the object found at import, monotonic). */
const cacheClock = performance;

/** A well-formed key, as far as it can be judged without I/O. */
interface Credential {
  hash: string;
  version: ApiKeyVersion;
}

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
  private readonly logger = new Logger('Auth');
  /** Found keys by hash, with when their lookup was sent (the cache clock). */
  private readonly found?: LRUCache<string, { stored: StoredApiKey; at: number }>;
  /** Hashes no key has, with when their lookup was sent; apart from `found`, so floods of guesses never evict keys. */
  private readonly missing?: LRUCache<string, number>;
  private readonly ttl: number;
  /** When the last successful poll of changes was sent (the cache clock): cached outcomes are as fresh as it. */
  private confirmedAt = -Infinity;
  /** The database instant the next poll asks for changes after; null until the first poll. */
  private since: Date | null = null;
  /** Changes already applied, by hash: a poll's overlap sees them again. */
  private readonly appliedChanges = new Map<string, number>();
  private pollTimer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private pollFailing = false;
  private readonly inflight = new Map<string, Promise<StoredApiKey | null>>();
  /** Keys (text) judged well-formed, with their hash: a client sends the same key on every request. */
  private readonly credentials = new LRUCache<string, Credential>({ max: CACHE_MAX });
  /** Hashes the database returned a key for: their lookups are never guesses. */
  private readonly known = new LRUCache<string, true>({ max: CACHE_MAX });
  /** Failed lookups of never-found version 1 keys per address, in the current minute. */
  private readonly failuresByAddress = new LRUCache<string, { minute: number; count: number }>({ max: CACHE_MAX });
  private readonly failedLookups: TokenBucket;
  private readonly unknownLookupSlots: Semaphore;
  /**
   * When each key was last recorded in use. Read with peek(), which leaves the order alone: a
   * key moves up when it is recorded again (once a minute while in use), so the least recently
   * recorded go first, and a read costs no reordering (bench scenario listPetsManyKeys).
   */
  private readonly lastTouched = new LRUCache<string, number>({ max: CACHE_MAX });
  private readonly touches = new Set<Promise<void>>();

  constructor(
    private readonly keys: ApiKeysService,
    private readonly clock: Clock,
    @Inject(apiKeysConfig.token) private readonly config: ApiKeysConfig,
    @Inject(databaseConfig.token) database: DatabaseConfig,
    @Optional() private readonly observer?: AuthObserver,
  ) {
    this.ttl = config.apiKeyCacheTtlMs;
    if (this.ttl > 0) {
      this.found = new LRUCache({ max: CACHE_MAX });
      this.missing = new LRUCache({ max: CACHE_MAX });
    }
    keys.onKeyChanged((hash) => this.forget(hash));
    this.failedLookups = new TokenBucket(config.apiKeyUnknownLookupsPerSecond);
    this.unknownLookupSlots = new Semaphore(Math.max(1, Math.floor(database.dbPoolMax / 2)), UNKNOWN_LOOKUP_QUEUE);
  }

  /**
   * The outcome of an Authorization header sent from `address`. Bad credentials are a result
   * ({ok: false}), never an exception; only a failing database, or a full queue of lookups of
   * never-found keys, rejects (both answered 503).
   */
  async verify(header: string | undefined, address: string): Promise<AuthResult> {
    const parsed = parseHeader(header);
    if (typeof parsed !== 'string') return parsed;
    const credential = this.credential(parsed);
    if (credential === null)
      return this.refusal(
        null,
        'malformed',
        'The API key is malformed or forged; check that it was copied completely.',
      );
    const cached = this.cached(credential.hash);
    if (cached !== undefined) return this.judge(cached, credential.hash);
    if (credential.version === 2 || this.known.has(credential.hash))
      return this.judge(await this.lookup(credential.hash), credential.hash);
    return this.lookupGuess(credential.hash, address);
  }

  /** Drops a key's cached lookup (it was revoked, rolled or re-planned by this process). */
  forget(hash: string): void {
    this.found?.delete(hash);
    this.missing?.delete(hash);
    this.inflight.delete(hash);
  }

  onApplicationBootstrap(): void {
    if (this.ttl === 0) return;
    this.pollTimer = setInterval(
      () => {
        if (this.polling === undefined) void this.pollChanges();
      },
      Math.max(1, Math.floor(this.ttl / 2)),
    );
    this.pollTimer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.pollTimer);
    await Promise.allSettled([...this.touches, this.polling]);
  }

  /**
   * Asks for the keys changed since the last poll and drops them from the cache; then every
   * cached outcome counts as fresh as of this poll's start. The first poll only learns the
   * database's clock. A failing poll confirms nothing, so the cache runs out within the TTL.
   * Polls run one at a time: one asked for while another runs starts after it, so an earlier
   * poll never answers last and takes the cache's freshness back to its older start.
   */
  async pollChanges(): Promise<void> {
    while (this.polling !== undefined) await this.polling;
    const poll = this.poll();
    this.polling = poll;
    try {
      await poll;
    } finally {
      this.polling = undefined;
    }
  }

  private async poll(): Promise<void> {
    const started = cacheClock.now();
    try {
      const { now, changes } = await this.keys.changesSince(this.since);
      if (this.since !== null) {
        for (const { hashes, changedAt } of changes) {
          for (const hash of hashes) {
            if (this.appliedChanges.get(hash) === changedAt.getTime()) continue;
            this.appliedChanges.set(hash, changedAt.getTime());
            this.forget(hash);
          }
        }
        this.confirmedAt = started;
      }
      this.since = new Date(now.getTime() - CHANGE_OVERLAP_MS);
      for (const [hash, changedAt] of this.appliedChanges)
        if (changedAt <= this.since.getTime()) this.appliedChanges.delete(hash);
      if (this.pollFailing) this.logger.log('polling changed API keys again; cached keys are kept once more');
      this.pollFailing = false;
    } catch (err) {
      if (!this.pollFailing) {
        this.logger.warn(
          `could not poll changed API keys (cached keys now expire within API_KEY_CACHE_TTL_MS): ${(err as Error)?.message ?? err}`,
        );
      }
      this.pollFailing = true;
    }
  }

  /** The hash and version of a well-formed key, or null. */
  private credential(key: string): Credential | null {
    let credential = this.credentials.get(key);
    if (credential === undefined) {
      const version = apiKeyVersion(key, this.config.apiKeyChecksumSecret);
      if (version === null) return null;
      credential = { hash: hashApiKey(key, this.config.apiKeyPepper), version };
      this.credentials.set(key, credential);
    }
    return credential;
  }

  /** A cached lookup still fresh: the key, null for a cached miss, undefined when nothing is cached. */
  private cached(hash: string): StoredApiKey | null | undefined {
    const hit = this.found?.get(hash);
    if (hit !== undefined) {
      if (this.fresh(hit.at)) return hit.stored;
      this.found?.delete(hash);
    }
    const miss = this.missing?.get(hash);
    if (miss !== undefined) {
      if (this.fresh(miss)) return null;
      this.missing?.delete(hash);
    }
    return undefined;
  }

  /** Whether an outcome looked up at `at` may still be used: it, or the last poll since, is within the TTL. */
  private fresh(at: number): boolean {
    return cacheClock.now() - Math.max(at, this.confirmedAt) < this.ttl;
  }

  /**
   * A version 1 key this instance has never found: looked up within the address's and the
   * instance's budgets of failed lookups. Such lookups run on at most half the pool at once
   * (others wait their turn, never refused while the queue has room), and the budgets are
   * checked when a lookup starts and charged when it fails: a valid key costs neither, and
   * concurrent guesses overshoot a budget by fewer than the lookups running at once.
   */
  private async lookupGuess(hash: string, address: string): Promise<AuthResult> {
    return this.unknownLookupSlots.run(async () => {
      // Another request may have looked this key up while this one waited.
      const cached = this.cached(hash);
      if (cached !== undefined) return this.judge(cached, hash);
      const running = this.inflight.get(hash);
      if (running !== undefined) return this.judge(await running, hash);

      const nowMs = this.clock.now().getTime();
      const minute = Math.floor(nowMs / 60_000);
      let failures = this.failuresByAddress.get(address);
      if (failures === undefined || failures.minute !== minute) {
        failures = { minute, count: 0 };
        this.failuresByAddress.set(address, failures);
      }
      if (failures.count >= this.config.apiKeyFailedLookupsPerAddress) {
        const retryAfter = String(60 - (Math.floor(nowMs / 1000) % 60));
        const message = `Too many unknown API keys were sent from this client address this minute; its new keys are checked again in ${retryAfter} seconds.`;
        return this.refusal(
          new ApiError(429, 'rate_limit_exceeded', message, { headers: { 'Retry-After': retryAfter } }),
          'address_budget',
        );
      }
      if (!this.failedLookups.available(nowMs)) return this.refusal(busy(), 'instance_budget');
      const stored = await this.lookup(hash);
      if (stored === null) {
        failures.count += 1;
        this.failedLookups.spend();
      }
      return this.judge(stored, hash);
    }, busy);
  }

  /**
   * One lookup, shared by concurrent requests for the same key; cached by outcome unless the key
   * was forgotten while it ran (forget() takes it out of `inflight`: its outcome may be stale).
   */
  private lookup(hash: string): Promise<StoredApiKey | null> {
    const running = this.inflight.get(hash);
    if (running !== undefined) return running;
    const at = cacheClock.now();
    this.observer?.lookup();
    const pending: Promise<StoredApiKey | null> = this.keys.findByHash(hash).then(
      (stored) => {
        if (stored) this.known.set(hash, true);
        if (this.inflight.get(hash) === pending) {
          this.inflight.delete(hash);
          if (stored) this.found?.set(hash, { stored, at });
          else this.missing?.set(hash, at);
        }
        return stored;
      },
      (err: unknown) => {
        if (this.inflight.get(hash) === pending) this.inflight.delete(hash);
        throw err;
      },
    );
    this.inflight.set(hash, pending);
    return pending;
  }

  /** The outcome of a lookup at the current instant; a key found valid is recorded in use. */
  private judge(stored: StoredApiKey | null, hash: string): AuthResult {
    if (!stored || !hashesEqual(stored.hash, hash) || stored.revokedAt !== null) {
      return this.refusal(null, 'unknown', 'The API key is not valid: it is unknown or has been revoked.');
    }
    const now = this.clock.now();
    if (stored.expiresAt !== null && stored.expiresAt <= now) {
      return this.refusal(
        new ApiError(
          401,
          'api_key_expired',
          `The API key expired at ${stored.expiresAt.toISOString()}; ask for a new one.`,
        ),
        'expired',
      );
    }
    if (stored.previousExpiresAt !== null && stored.previousExpiresAt <= now) {
      const message = `This secret of the API key was replaced by a roll and stopped working at ${stored.previousExpiresAt.toISOString()}; use the new secret.`;
      return this.refusal(new ApiError(401, 'api_key_expired', message), 'expired');
    }
    this.touch(stored);
    return {
      ok: true,
      principal: { keyId: stored.id.toString(), plan: stored.plan, perMinute: stored.perMinute, perDay: stored.perDay },
    };
  }

  private refusal(error: ApiError | null, reason: ApiKeyRefusalReason, message?: string): AuthResult {
    this.observer?.refused(reason);
    return { ok: false, error: error ?? invalid(message as string) };
  }

  /** Records use in `last_used_at`, at most once a minute per key; never delays the request. */
  private touch(stored: StoredApiKey): void {
    const id = stored.id.toString();
    const now = this.clock.now().getTime();
    const last = this.lastTouched.peek(id) ?? stored.lastUsedAt?.getTime() ?? 0;
    if (now - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(id, now);
    const done = this.keys
      .touch(stored.id)
      .catch((err: unknown) =>
        this.logger.warn(`could not record use of API key ${id}: ${(err as Error)?.message ?? err}`),
      )
      .finally(() => this.touches.delete(done));
    this.touches.add(done);
  }
}

function invalid(message: string): ApiError {
  return new ApiError(401, 'invalid_api_key', message);
}

/** The bearer credential of an Authorization header, or the refusal; never a lookup. */
function parseHeader(header: string | undefined): string | AuthResult {
  // The messages never include what was presented: it may be a real key sent to the wrong place.
  if (header === undefined || header.trim() === '') {
    return {
      ok: false,
      error: new ApiError(401, 'missing_api_key', 'An API key is required: send it as "Authorization: Bearer <key>".'),
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
  new ApiError(
    503,
    'service_unavailable',
    'Too many unrecognised API keys are being checked right now; retry shortly.',
    { headers: { 'Retry-After': '1' } },
  );

/**
 * A budget of `perSecond` events per second, in bursts of up to `perSecond`, refilled by the
 * caller's clock. Spending is allowed into debt (events that were already under way), which
 * later refills pay back first.
 */
class TokenBucket {
  private tokens: number;
  private lastMs?: number;

  constructor(private readonly perSecond: number) {
    this.tokens = perSecond;
  }

  available(nowMs: number): boolean {
    if (this.lastMs !== undefined && nowMs > this.lastMs) {
      this.tokens = Math.min(this.perSecond, this.tokens + ((nowMs - this.lastMs) * this.perSecond) / 1000);
    }
    this.lastMs = nowMs;
    return this.tokens >= 1;
  }

  spend(): void {
    this.tokens -= 1;
  }
}

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
