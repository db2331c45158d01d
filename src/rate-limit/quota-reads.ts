import { LRUCache } from 'lru-cache';
import { windowReset, windowStart } from './rate-limit.windows.js';

/**
 * Reads of a key's own quota (GET /v1/rate_limit) each instance answers per key and UTC minute.
 * Such reads are not counted against the key's rate limits, so they need a bound of their own:
 * well above what a client polling its quota needs (one read a second), far below what would
 * make the reads a load.
 */
export const QUOTA_READS_PER_MINUTE = 120;
/** Keys whose reads are counted at once; the least recently used are forgotten. */
const MAX_KEYS = 10_000;
const MINUTE_MS = 60_000;

/**
 * The budget of quota reads per key, in this instance's memory: no I/O, a fixed window per UTC
 * minute like the minute limit's. Across instances a key gets at most this many reads a minute
 * from each instance its reads reach.
 */
export class QuotaReads {
  private readonly minutes = new LRUCache<string, { start: number; count: number }>({ max: MAX_KEYS });

  constructor(readonly perMinute = QUOTA_READS_PER_MINUTE) {}

  /** Takes one read of the subject's budget at `nowMs`: 0 when granted, else whole seconds until the budget renews. */
  take(subject: string, nowMs: number): number {
    const start = windowStart(nowMs, MINUTE_MS);
    let minute = this.minutes.get(subject);
    if (minute === undefined || minute.start !== start) {
      minute = { start, count: 0 };
      this.minutes.set(subject, minute);
    }
    if (minute.count >= this.perMinute) return Math.max(1, Math.ceil((windowReset(nowMs, MINUTE_MS) - nowMs) / 1000));
    minute.count += 1;
    return 0;
  }
}
