import { KEY_OPERATIONS } from '../api-keys/operations.js';

/** One UTC hour in milliseconds. */
export const HOUR_MS = 3_600_000;

/**
 * The operations usage is split by: the /v1 operations counted against a key, and `other` for
 * requests to /v1 paths no operation answers (and rows written before operations were recorded).
 */
export const USAGE_OPERATIONS = [...KEY_OPERATIONS, 'other'] as const;
export type UsageOperation = (typeof USAGE_OPERATIONS)[number];

/** One key's counts for one operation in one UTC hour, as taken from the counts to be written. */
export interface UsageRow {
  keyId: string;
  /** The start of the UTC hour, in Unix milliseconds. */
  hour: number;
  operation: UsageOperation;
  requests: number;
  /** Of `requests`, the ones answered 429. */
  limited: number;
}

/** A key's counts for one operation in one hour, incremented in place. */
interface Tally {
  requests: number;
  limited: number;
}

/**
 * The requests counted against each key in each UTC hour, per operation, held in memory until
 * they are written (UsageService). record() is on every request's path: two Map lookups (the
 * operation's, then the key's) and two increments; the maps of the current hour are kept at hand,
 * so the outer map is only read when the hour turns or after a take(). take() hands over
 * everything and starts afresh; restore() adds back what could not be written.
 */
export class UsageCounts {
  private byHour = new Map<number, Map<UsageOperation, Map<string, Tally>>>();
  private currentHour = -1;
  private current: Map<UsageOperation, Map<string, Tally>> | undefined;

  record(keyId: string, operation: UsageOperation, nowMs: number, limited: boolean): void {
    const hour = nowMs - (nowMs % HOUR_MS);
    let byOperation = this.current;
    if (byOperation === undefined || hour !== this.currentHour) byOperation = this.hourMap(hour);
    let byKey = byOperation.get(operation);
    if (byKey === undefined) byOperation.set(operation, (byKey = new Map()));
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
      for (const [operation, byKey] of taken.get(hour) as Map<UsageOperation, Map<string, Tally>>) {
        for (const [keyId, tally] of byKey) {
          rows.push({ keyId, hour, operation, requests: tally.requests, limited: tally.limited });
        }
      }
    }
    return rows;
  }

  /** Adds rows back (a write that failed), to be written with what is counted meanwhile. */
  restore(rows: readonly UsageRow[]): void {
    for (const row of rows) {
      const byOperation = this.hourMap(row.hour);
      let byKey = byOperation.get(row.operation);
      if (byKey === undefined) byOperation.set(row.operation, (byKey = new Map()));
      const tally = byKey.get(row.keyId);
      if (tally === undefined) byKey.set(row.keyId, { requests: row.requests, limited: row.limited });
      else {
        tally.requests += row.requests;
        tally.limited += row.limited;
      }
    }
  }

  private hourMap(hour: number): Map<UsageOperation, Map<string, Tally>> {
    let byOperation = this.byHour.get(hour);
    if (byOperation === undefined) {
      byOperation = new Map();
      this.byHour.set(hour, byOperation);
    }
    // Requests are counted in the order they arrive, so the newest hour is the one to keep at hand.
    if (hour >= this.currentHour) {
      this.currentHour = hour;
      this.current = byOperation;
    }
    return byOperation;
  }
}
