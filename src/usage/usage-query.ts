import { HOUR_MS } from './usage-counts.js';

export const GRANULARITIES = ['hour', 'day'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** The most periods one read answers (1000 hours is about 41 days; 1000 days about 2.7 years). */
export const MAX_USAGE_PERIODS = 1000;

const PERIOD_MS: Record<Granularity, number> = { hour: HOUR_MS, day: 24 * HOUR_MS };

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
