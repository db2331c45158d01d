import { LRUCache } from 'lru-cache';
import type { Clock } from '../time/clock.js';
import { counterName, RateLimitStore } from './rate-limit.store.js';
import {
  blockingWindow,
  ConsumeRequest,
  ConsumeResult,
  windowReset,
  windowStart,
  WindowState,
} from './rate-limit.windows.js';

/** Everything known about one subject; stale parts are recognised by their window start. */
interface Entry {
  windows: Map<string, { start: number; count: number }>;
  /** Rejections in the current limited period, identified by `<window>:<start>`. */
  rejections: { period: string; count: number } | null;
  bannedUntil: number;
}

/**
 * What one subject's entry costs, estimated: the entry, its map of two windows and the cache's
 * own bookkeeping (measured on Node 20: about 490 bytes with a 20-character name), plus the
 * name at two bytes a character.
 */
export const ENTRY_BYTES = 512;
const entryBytes = (_entry: Entry, name: string): number => ENTRY_BYTES + 2 * name.length;

/**
 * Counters in process memory: the store without REDIS_URL, and each instance's fallback while
 * Redis is unreachable. `consume` is synchronous inside, so concurrent requests of one process
 * are decided exactly. Memory is bounded by an LRU of at most `maxSubjects` entries and
 * `maxBytes` (estimated; names are bounded by counterName) and nothing is scheduled per hit: an
 * entry's windows and ban simply stop counting when their time is over (the stock throttler
 * storage keeps a timer per hit; lru-cache's own TTL would too, through its `ttlResolution`
 * timer, so it is not used).
 */
export class MemoryRateLimitStore extends RateLimitStore {
  private readonly entries: LRUCache<string, Entry>;

  constructor(clock: Clock, maxSubjects: number, maxBytes = maxSubjects * (ENTRY_BYTES + 256)) {
    super(clock);
    this.entries = new LRUCache<string, Entry>({ max: maxSubjects, maxSize: maxBytes, sizeCalculation: entryBytes });
  }

  /** Estimated bytes held (tests). */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  /** Subjects currently held (tests). */
  get size(): number {
    return this.entries.size;
  }

  consume(request: ConsumeRequest): ConsumeResult {
    return this.consumeSync(request);
  }

  consumeSync(request: ConsumeRequest): ConsumeResult {
    const { nowMs, windows: specs, banThreshold, banMs } = request;
    const subject = counterName(request.subject);
    let entry = this.entries.get(subject);
    if (!entry) {
      entry = { windows: new Map(), rejections: null, bannedUntil: 0 };
      this.entries.set(subject, entry);
    }
    const starts = specs.map((s) => windowStart(nowMs, s.ttlMs));
    const counts = specs.map((s, i) => {
      const w = entry.windows.get(s.name);
      return w && w.start === starts[i] ? w.count : 0;
    });
    const state = (): WindowState[] =>
      specs.map((s, i) => ({ ...s, count: counts[i], resetMs: windowReset(nowMs, s.ttlMs) }));

    if (entry.bannedUntil > nowMs) {
      return { outcome: 'banned', windows: state(), bannedUntilMs: entry.bannedUntil };
    }
    const blocking = blockingWindow(specs, counts, nowMs);
    if (blocking === -1) {
      specs.forEach((s, i) => {
        counts[i] += 1;
        entry.windows.set(s.name, { start: starts[i], count: counts[i] });
      });
      return { outcome: 'allowed', windows: state() };
    }
    const period = `${specs[blocking].name}:${starts[blocking]}`;
    if (entry.rejections?.period !== period) entry.rejections = { period, count: 0 };
    entry.rejections.count += 1;
    if (entry.rejections.count > banThreshold) {
      // A fresh count after the ban: a key still limited when it ends gets rate_limit_exceeded
      // again before it can be banned again.
      entry.rejections = null;
      entry.bannedUntil = nowMs + banMs;
      return { outcome: 'banned', windows: state(), bannedUntilMs: entry.bannedUntil };
    }
    return { outcome: 'limited', windows: state() };
  }
}
