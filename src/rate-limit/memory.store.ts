import { LRUCache } from 'lru-cache';
import type { Clock } from '../time/clock.js';
import { counterName, RateLimitStore } from './rate-limit.store.js';
import {
  blockingWindow,
  ConsumeRequest,
  ConsumeResult,
  PeekResult,
  windowReset,
  windowStart,
  WindowState,
} from './rate-limit.windows.js';

/** What is counted for one subject; stale parts are recognised by their window start. */
interface Entry {
  windows: Map<string, { start: number; count: number }>;
  /** Rejections in the current limited period, identified by `<window>:<start>`. */
  rejections: { period: string; count: number } | null;
  /** End of a key's ban (an address's ban is kept apart, in `bans`). */
  bannedUntil: number;
}

/**
 * What one subject's entry costs, estimated: the entry, its map of two windows and the cache's
 * own bookkeeping, plus the name at two bytes a character.
 */
export const ENTRY_BYTES = 512;
const entryBytes = (_entry: Entry, name: string): number => ENTRY_BYTES + 2 * name.length;

/**
 * Counters in process memory: the store without Redis, and each instance's fallback while
 * Redis is unreachable. `consume` is synchronous inside, so concurrent requests of one process
 * are decided exactly. Nothing is scheduled per hit: an entry's windows and ban simply stop
 * counting when their time is over.
 *
 * Three bounded LRUs, so that churn cannot evict what matters: API keys' counters and bans
 * (`keys`: only requests with a valid key reach them), anonymous addresses' counters
 * (`addresses`: a flood of fresh addresses only churns these), and addresses' bans (`bans`:
 * each one costs its address a whole limited period to earn). Each holds at most `maxSubjects`
 * entries, and each LRU of counters at most `maxBytes` (estimated; names are bounded by
 * counterName).
 */
export class MemoryRateLimitStore extends RateLimitStore {
  private readonly keys: LRUCache<string, Entry>;
  private readonly addresses: LRUCache<string, Entry>;
  private readonly bans: LRUCache<string, number>;

  constructor(clock: Clock, maxSubjects: number, maxBytes = maxSubjects * (ENTRY_BYTES + 256)) {
    super(clock);
    const options = { max: maxSubjects, maxSize: maxBytes, sizeCalculation: entryBytes };
    this.keys = new LRUCache<string, Entry>(options);
    this.addresses = new LRUCache<string, Entry>(options);
    this.bans = new LRUCache<string, number>({ max: maxSubjects });
  }

  /** Estimated bytes held by the counters (tests). */
  get bytes(): number {
    return this.keys.calculatedSize + this.addresses.calculatedSize;
  }

  /** Subjects whose counters are held (tests). */
  get size(): number {
    return this.keys.size + this.addresses.size;
  }

  consume(request: ConsumeRequest): ConsumeResult {
    return this.consumeSync(request);
  }

  peek(request: ConsumeRequest): PeekResult {
    const { nowMs, windows: specs } = request;
    const subject = counterName(request.subject);
    const isKey = request.subject.startsWith('key:');
    // peek() leaves the LRUs' order alone: reading a quota is no use of the counters.
    const entry = (isKey ? this.keys : this.addresses).peek(subject);
    const windows = specs.map((s) => {
      const w = entry?.windows.get(s.name);
      const count = w && w.start === windowStart(nowMs, s.ttlMs) ? w.count : 0;
      return { ...s, count, resetMs: windowReset(nowMs, s.ttlMs) };
    });
    const bannedUntil = isKey ? (entry?.bannedUntil ?? 0) : (this.bans.peek(subject) ?? 0);
    return bannedUntil > nowMs ? { windows, bannedUntilMs: bannedUntil } : { windows };
  }

  consumeSync(request: ConsumeRequest): ConsumeResult {
    const { nowMs, windows: specs, banThreshold, banMs } = request;
    const subject = counterName(request.subject);
    const isKey = request.subject.startsWith('key:');
    const entries = isKey ? this.keys : this.addresses;
    let entry = entries.get(subject);
    if (!entry) {
      entry = { windows: new Map(), rejections: null, bannedUntil: 0 };
      entries.set(subject, entry);
    }
    const starts = specs.map((s) => windowStart(nowMs, s.ttlMs));
    const counts = specs.map((s, i) => {
      const w = entry.windows.get(s.name);
      return w && w.start === starts[i] ? w.count : 0;
    });
    const state = (): WindowState[] =>
      specs.map((s, i) => ({ ...s, count: counts[i], resetMs: windowReset(nowMs, s.ttlMs) }));

    const bannedUntil = isKey ? entry.bannedUntil : (this.bans.get(subject) ?? 0);
    if (bannedUntil > nowMs) {
      return { outcome: 'banned', windows: state(), bannedUntilMs: bannedUntil };
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
      const until = nowMs + banMs;
      if (isKey) entry.bannedUntil = until;
      else this.bans.set(subject, until);
      return { outcome: 'banned', windows: state(), bannedUntilMs: until, banStarted: true };
    }
    return { outcome: 'limited', windows: state() };
  }
}
