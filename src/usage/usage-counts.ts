/** One UTC hour in milliseconds. */
export const HOUR_MS = 3_600_000;

/** One key's counts in one UTC hour, as taken from the counts to be written. */
export interface UsageRow {
  keyId: string;
  /** The start of the UTC hour, in Unix milliseconds. */
  hour: number;
  requests: number;
  /** Of `requests`, the ones answered 429. */
  limited: number;
}

/** A key's counts in one hour, incremented in place. */
interface Tally {
  requests: number;
  limited: number;
}

/**
 * The requests counted against each key in each UTC hour, held in memory until they are written
 * (UsageService). record() is on every request's path: a Map lookup and two increments; the map
 * of the current hour is kept at hand, so the outer map is only read when the hour turns or after
 * a take(). take() hands over everything and starts afresh; restore() adds back what could not
 * be written.
 */
export class UsageCounts {
  private byHour = new Map<number, Map<string, Tally>>();
  private currentHour = -1;
  private current: Map<string, Tally> | undefined;

  record(keyId: string, nowMs: number, limited: boolean): void {
    const hour = nowMs - (nowMs % HOUR_MS);
    let byKey = this.current;
    if (byKey === undefined || hour !== this.currentHour) byKey = this.hourMap(hour);
    const tally = byKey.get(keyId);
    if (tally === undefined) {
      byKey.set(keyId, { requests: 1, limited: limited ? 1 : 0 });
      return;
    }
    tally.requests++;
    if (limited) tally.limited++;
  }

  /** Whether nothing is held. */
  get isEmpty(): boolean {
    return this.byHour.size === 0;
  }

  /** Everything held, oldest hour first; the counts start afresh. */
  take(): UsageRow[] {
    const taken = this.byHour;
    this.byHour = new Map();
    this.current = undefined;
    this.currentHour = -1;
    const rows: UsageRow[] = [];
    for (const hour of [...taken.keys()].sort((a, b) => a - b)) {
      for (const [keyId, tally] of taken.get(hour) as Map<string, Tally>) {
        rows.push({ keyId, hour, requests: tally.requests, limited: tally.limited });
      }
    }
    return rows;
  }

  /** Adds rows back (a write that failed), to be written with what is counted meanwhile. */
  restore(rows: readonly UsageRow[]): void {
    for (const row of rows) {
      const byKey = this.hourMap(row.hour);
      const tally = byKey.get(row.keyId);
      if (tally === undefined) byKey.set(row.keyId, { requests: row.requests, limited: row.limited });
      else {
        tally.requests += row.requests;
        tally.limited += row.limited;
      }
    }
  }

  private hourMap(hour: number): Map<string, Tally> {
    let byKey = this.byHour.get(hour);
    if (byKey === undefined) {
      byKey = new Map();
      this.byHour.set(hour, byKey);
    }
    // Requests are counted in the order they arrive, so the newest hour is the one to keep at hand.
    if (hour >= this.currentHour) {
      this.currentHour = hour;
      this.current = byKey;
    }
    return byKey;
  }
}
