import { Injectable } from '@nestjs/common';
import { ApiKeysRepository } from '../api-keys/api-keys.repository.js';
import { KeyUsageRepository, type UsagePeriodRow } from './key-usage.repository.js';
import type { UsageOperation } from './usage-counts.js';
import { periodsOf, type UsageQuery } from './usage-query.js';

/** A key's usage in one period. */
export interface UsagePeriod {
  /** The start of the UTC hour or day, ISO-8601 (`2026-11-27T06:00:00.000Z`). */
  period: string;
  /** Requests counted against the key's rate limits. */
  requests: number;
  /** Of those, the ones answered 429. */
  limited: number;
}

/** A key's usage of one operation in one period. */
export interface UsageOperationPeriod extends UsagePeriod {
  operation: UsageOperation;
}

/** One key's usage over a range, with its name. */
export interface KeyUsageTotal {
  keyId: bigint;
  name: string;
  requests: number;
  limited: number;
}

/** The most keys top-keys answers, and how many it answers unless asked. */
export const MAX_TOP_KEYS = 100;
export const DEFAULT_TOP_KEYS = 10;

function periodJson(r: UsagePeriodRow): UsagePeriod {
  return { period: r.period.toISOString(), requests: Number(r.requests), limited: Number(r.limited) };
}

/**
 * Reads usage per key, hour and operation (written by every instance's UsageRecorder): a key's
 * usage (the admin API's `GET /admin/v1/keys/{id}/usage`, the key tool's `usage`, the console),
 * the totals over all keys and the busiest keys.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly usageRows: KeyUsageRepository,
    private readonly keys: ApiKeysRepository,
  ) {}

  /**
   * A key's usage in the periods of `query` (periodsOf), oldest first; periods without requests
   * are left out. Null when no key has this id. Counts are those written so far: each instance
   * writes every USAGE_FLUSH_MS, so the last few seconds may be missing.
   */
  async usage(keyId: bigint, query: UsageQuery): Promise<UsagePeriod[] | null> {
    const { from, to, granularity } = periodsOf(query.from, query.to, query.granularity);
    if ((await this.keys.findInfo(keyId)) === null) return null;
    return (await this.usageRows.byPeriod(keyId, from, to, granularity)).map(periodJson);
  }

  /**
   * As usage(), split by operation: one row per period and operation with requests, oldest period
   * first, operations in name order within a period.
   */
  async usageByOperation(keyId: bigint, query: UsageQuery): Promise<UsageOperationPeriod[] | null> {
    const { from, to, granularity } = periodsOf(query.from, query.to, query.granularity);
    if ((await this.keys.findInfo(keyId)) === null) return null;
    const rows = await this.usageRows.byPeriodAndOperation(keyId, from, to, granularity);
    return rows.map((r) => ({ ...periodJson(r), operation: r.operation }));
  }

  /** Every key's usage summed per period of `query`, oldest first; periods without requests left out. */
  async totals(query: UsageQuery): Promise<UsagePeriod[]> {
    const { from, to, granularity } = periodsOf(query.from, query.to, query.granularity);
    return (await this.usageRows.totals(from, to, granularity)).map(periodJson);
  }

  /**
   * The `limit` keys with the most requests in the hours that overlap [from, to), most first,
   * with their names. The range may span at most MAX_USAGE_PERIODS hours.
   */
  async topKeys(from: Date, to: Date, limit: number): Promise<KeyUsageTotal[]> {
    const range = periodsOf(from, to, 'hour');
    const rows = await this.usageRows.topKeys(range.from, range.to, limit);
    const names = await this.keys.namesOf(rows.map((r) => r.keyId));
    return rows.map((r) => ({
      keyId: r.keyId,
      name: names.get(r.keyId) ?? '',
      requests: Number(r.requests),
      limited: Number(r.limited),
    }));
  }

  /** The requests and 429s of each of `keyIds` since `from` (keys without any are absent). */
  async keyTotals(keyIds: readonly bigint[], from: Date, to: Date): Promise<Map<bigint, UsagePeriod>> {
    const rows = await this.usageRows.keyTotals(keyIds, from, to);
    return new Map(
      rows.map((r) => [
        r.keyId,
        { period: from.toISOString(), requests: Number(r.requests), limited: Number(r.limited) },
      ]),
    );
  }
}
