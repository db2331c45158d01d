import { Injectable } from '@nestjs/common';
import { ApiKeysRepository } from '../api-keys/api-keys.repository.js';
import { KeyUsageRepository, type UsagePeriodRow } from './key-usage.repository.js';
import { HOUR_MS, type UsageOperation } from './usage-counts.js';

export const GRANULARITIES = ['hour', 'day'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** The most periods one read answers (1000 hours is about 41 days; 1000 days about 2.7 years). */
export const MAX_USAGE_PERIODS = 1000;

const PERIOD_MS: Record<Granularity, number> = { hour: HOUR_MS, day: 24 * HOUR_MS };

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

export interface UsageQuery {
  from: Date;
  to: Date;
  granularity: Granularity;
}

/** A usage query that cannot be answered as asked; the message names the parameter. */
export class UsageQueryError extends Error {
  constructor(
    readonly parameter: 'from' | 'to' | 'granularity',
    message: string,
  ) {
    super(message);
  }
}

/** An instant in ISO-8601 with a date and, if a time is given, its offset (`Z` or `+01:00`). */
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/;

function instant(parameter: 'from' | 'to', raw: string): Date {
  const match = INSTANT.exec(raw);
  const at = match ? new Date(raw) : new Date(NaN);
  // Date rolls 2026-02-30 over to 2 March: a calendar date that does not exist is refused.
  const [y, m, d] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (Number.isNaN(at.getTime()) || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d || y < 1970) {
    throw new UsageQueryError(
      parameter,
      `${parameter} must be an ISO-8601 date or instant with its offset, such as 2026-11-01 or 2026-11-01T00:00:00Z, got "${raw}"`,
    );
  }
  return at;
}

/**
 * Reads a usage query as the admin API and the key tool take it: `from` and `to` as ISO-8601
 * (a date alone is its UTC midnight), `granularity` hour (the default) or day. The periods
 * answered are those that overlap [from, to): `from` is taken down and `to` up to whole periods.
 * Throws UsageQueryError if from is not before to, or the range spans more than MAX_USAGE_PERIODS.
 */
export function parseUsageQuery(raw: { from?: string; to?: string; granularity?: string }): UsageQuery {
  if (raw.from === undefined) throw new UsageQueryError('from', 'from is required');
  if (raw.to === undefined) throw new UsageQueryError('to', 'to is required');
  const granularity = raw.granularity ?? 'hour';
  if (!(GRANULARITIES as readonly string[]).includes(granularity)) {
    throw new UsageQueryError('granularity', `granularity must be hour or day, got "${granularity}"`);
  }
  return periodsOf(instant('from', raw.from), instant('to', raw.to), granularity as Granularity);
}

/** The whole periods that overlap [from, to), checked as parseUsageQuery says. */
export function periodsOf(from: Date, to: Date, granularity: Granularity): UsageQuery {
  const size = PERIOD_MS[granularity];
  if (from.getTime() >= to.getTime()) throw new UsageQueryError('to', 'to must be after from');
  const start = Math.floor(from.getTime() / size) * size;
  const end = Math.ceil(to.getTime() / size) * size;
  if ((end - start) / size > MAX_USAGE_PERIODS) {
    throw new UsageQueryError(
      'to',
      `from and to span more than ${MAX_USAGE_PERIODS} ${granularity}s; ask for a shorter range${granularity === 'hour' ? ' or by day' : ''}`,
    );
  }
  return { from: new Date(start), to: new Date(end), granularity };
}

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
