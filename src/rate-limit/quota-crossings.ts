import type { WindowState } from './rate-limit.windows.js';

/** The shares of a key's day window that are announced (`key.quota_threshold`), in percent. */
export const QUOTA_THRESHOLDS = [80, 100] as const;
export type QuotaThreshold = (typeof QUOTA_THRESHOLDS)[number];

/** The window the thresholds are of. */
export const QUOTA_WINDOW = 'day';

/** A key seen at or past a threshold of its day window, to be announced once per UTC day. */
export interface QuotaCrossing {
  keyId: string;
  /** The start of the UTC day (Unix milliseconds). */
  dayMs: number;
  threshold: QuotaThreshold;
  limit: number;
  /** The window's count when the crossing was seen. */
  used: number;
}

/**
 * Whether `count` requests reach `threshold` percent of `limit`: count >= ceil(limit * t / 100),
 * in integers (count is whole, so count * 100 >= limit * t says the same without rounding).
 */
export function reaches(count: number, limit: number, threshold: number): boolean {
  return count * 100 >= limit * threshold;
}

/**
 * The thresholds of keys' day windows seen crossed by this instance, held in memory until they
 * are handed to the queue (QuotaThresholds). `see` runs on every request counted against a key:
 * below 80% of the day (nearly every request) it is one multiplication and one comparison; at or
 * past it, one Map lookup. A crossing is noted once per key, day and threshold on this instance
 * (`noted`); several instances, or this one after a restart, may each note it: the database keeps
 * the announcement to one. A count at or past the threshold counts, not only the one equal to
 * it: a value can be skipped (another instance's lease given back) and must not be missed.
 */
export class QuotaCrossings {
  private pending = new Map<string, QuotaCrossing>();
  /** Per key, the UTC day and the highest threshold noted that day. */
  private readonly noted = new Map<string, { dayMs: number; threshold: number }>();

  /** Looks at a key's windows after a request was counted (allowed or refused). */
  see(keyId: string, windows: readonly WindowState[]): void {
    for (const w of windows) {
      if (w.name !== QUOTA_WINDOW) continue;
      if (!reaches(w.count, w.limit, QUOTA_THRESHOLDS[0])) return;
      const dayMs = w.resetMs - w.ttlMs;
      const seen = this.noted.get(keyId);
      const highest = seen !== undefined && seen.dayMs === dayMs ? seen.threshold : 0;
      for (const threshold of QUOTA_THRESHOLDS) {
        if (threshold <= highest || !reaches(w.count, w.limit, threshold)) continue;
        this.pending.set(`${keyId}:${dayMs}:${threshold}`, { keyId, dayMs, threshold, limit: w.limit, used: w.count });
        this.noted.set(keyId, { dayMs, threshold });
      }
      return;
    }
  }

  /** Whether no crossing waits to be handed over. */
  get isEmpty(): boolean {
    return this.pending.size === 0;
  }

  /**
   * Every crossing held, handed over; the notes of days before `nowMs`'s UTC day are dropped
   * (their windows are over, so nothing can cross them again).
   */
  take(nowMs: number): QuotaCrossing[] {
    const taken = [...this.pending.values()];
    this.pending = new Map();
    const today = nowMs - (nowMs % 86_400_000);
    for (const [keyId, seen] of this.noted) if (seen.dayMs < today) this.noted.delete(keyId);
    return taken;
  }

  /** Crossings that could not be handed over, kept for the next take (a crossing seen meanwhile stays). */
  restore(crossings: readonly QuotaCrossing[]): void {
    for (const c of crossings) {
      const id = `${c.keyId}:${c.dayMs}:${c.threshold}`;
      if (!this.pending.has(id)) this.pending.set(id, c);
    }
  }

  /**
   * Crossings nobody is told of (no endpoint subscribes): forgotten, so the key's next request
   * at or past the threshold notes them again, for an endpoint that subscribes later that day.
   */
  forget(crossings: readonly QuotaCrossing[]): void {
    for (const c of crossings) if (this.noted.get(c.keyId)?.dayMs === c.dayMs) this.noted.delete(c.keyId);
  }
}
