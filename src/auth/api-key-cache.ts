import { LRUCache } from 'lru-cache';
import type { StoredApiKey } from '../api-keys/api-keys.service.js';

/** Keys remembered per cache; beyond that the least recently used are dropped. */
export const CACHE_MAX = 10_000;
/** The cache's clock, read as lru-cache reads it (the object found at import, monotonic). */
export const cacheClock = performance;

/**
 * The outcomes of key lookups by hash: found keys, and hashes no key has, each with when its
 * lookup was sent (the cache clock). An outcome is used only while it, or the last confirmation
 * of the whole cache (a successful poll of changed keys, ApiKeyChangePoller), is less than
 * `ttlMs` old; `ttlMs` 0 caches nothing. Concurrent lookups of one key share a single query.
 */
export class ApiKeyCache {
  /**
   * Found keys by hash, with when their lookup was sent (the cache clock). Both caches are read
   * with peek(), which leaves the order alone: an entry moves up when a lookup sets it again,
   * so the oldest lookups go first, and a read costs no reordering (bench scenario listPetsManyKeys).
   */
  private readonly found?: LRUCache<string, { stored: StoredApiKey; at: number }>;
  /** Hashes no key has, with when their lookup was sent; apart from `found`, so floods of guesses never evict keys. */
  private readonly missing?: LRUCache<string, number>;
  /** When the last successful poll of changes was sent (the cache clock): cached outcomes are as fresh as it. */
  private confirmedAt = -Infinity;
  private readonly inflight = new Map<string, Promise<StoredApiKey | null>>();
  /** Hashes the database returned a key for: their lookups are never guesses. */
  private readonly known = new LRUCache<string, true>({ max: CACHE_MAX });

  constructor(
    private readonly ttl: number,
    /** The query of one key by hash. */
    private readonly find: (hash: string) => Promise<StoredApiKey | null>,
    /** Called for every query sent (metrics). */
    private readonly onLookup?: () => void,
  ) {
    if (this.ttl > 0) {
      this.found = new LRUCache({ max: CACHE_MAX });
      this.missing = new LRUCache({ max: CACHE_MAX });
    }
  }

  /** A cached lookup still fresh: the key, null for a cached miss, undefined when nothing is cached. */
  cached(hash: string): StoredApiKey | null | undefined {
    const hit = this.found?.peek(hash);
    if (hit !== undefined) {
      if (this.fresh(hit.at)) return hit.stored;
      this.found?.delete(hash);
    }
    const miss = this.missing?.peek(hash);
    if (miss !== undefined) {
      if (this.fresh(miss)) return null;
      this.missing?.delete(hash);
    }
    return undefined;
  }

  /** Whether the database has returned a key for this hash (its lookups are never guesses). */
  isKnown(hash: string): boolean {
    return this.known.has(hash);
  }

  /** The lookup of this hash running now, if any. */
  running(hash: string): Promise<StoredApiKey | null> | undefined {
    return this.inflight.get(hash);
  }

  /**
   * Caches keys found by a query of their own as if each had been looked up at `at` (the cache
   * clock, taken before that query was sent); an outcome already cached is kept. `keys` come
   * most important first and are set last to first, so that beyond CACHE_MAX the first stay.
   */
  warm(keys: readonly StoredApiKey[], at: number): void {
    if (this.found === undefined) return;
    for (let i = keys.length - 1; i >= 0; i--) {
      const stored = keys[i];
      this.known.set(stored.hash, true);
      if (!this.found.has(stored.hash)) this.found.set(stored.hash, { stored, at });
    }
  }

  /** Drops a key's cached lookup (it changed). */
  forget(hash: string): void {
    this.found?.delete(hash);
    this.missing?.delete(hash);
    this.inflight.delete(hash);
  }

  /** Every cached outcome counts as fresh as of `at` (the cache clock): no change before it was missed. */
  confirm(at: number): void {
    this.confirmedAt = at;
  }

  /**
   * One lookup, shared by concurrent requests for the same key; cached by outcome unless the key
   * was forgotten while it ran (forget() takes it out of `inflight`: its outcome may be stale).
   */
  lookup(hash: string): Promise<StoredApiKey | null> {
    const running = this.inflight.get(hash);
    if (running !== undefined) return running;
    const at = cacheClock.now();
    this.onLookup?.();
    const pending: Promise<StoredApiKey | null> = this.find(hash).then(
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

  /** Whether an outcome looked up at `at` may still be used: it, or the last poll since, is within the TTL. */
  private fresh(at: number): boolean {
    return cacheClock.now() - Math.max(at, this.confirmedAt) < this.ttl;
  }
}
