import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client.js';
import type { PreparedStatement } from '../database/database.js';
import { PrismaService } from '../database/prisma.service.js';
import { HOUR_MS, type UsageOperation, type UsageRow } from './usage-counts.js';

const DAY_MS = 24 * HOUR_MS;

/** Rows one DELETE of the purge removes (one short statement each, so no lock is held long). */
export const PURGE_BATCH = 1_000;

/**
 * Adds a batch of counts, one row per key, hour and operation, in one statement: the batch comes
 * as five arrays of equal length, and a row already written (by another instance, or an earlier
 * flush) gets the counts added to it. The rows are taken in key, hour and operation order, so
 * instances writing batches that share rows lock them in the same order and never deadlock.
 */
const ADD: PreparedStatement = {
  name: 'key_usage_add',
  text:
    'INSERT INTO "key_usage" ("key_id", "hour", "operation", "requests", "limited") ' +
    'SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::bigint[], $5::bigint[]) ' +
    'AS "batch" ("key_id", "hour", "operation", "requests", "limited") ' +
    'ORDER BY "key_id", "hour", "operation" ' +
    'ON CONFLICT ("key_id", "hour", "operation") DO UPDATE SET "requests" = "key_usage"."requests" + excluded."requests", ' +
    '"limited" = "key_usage"."limited" + excluded."limited"',
};

/** Hours [from, to) of key_usage whose counts topKeys adds (sign 1) or takes away (-1). */
interface HourPart {
  from: Date;
  to: Date;
  sign: 1 | -1;
}

/** Counts in one period (an hour, or a UTC day summed from its hours). */
export interface UsagePeriodRow {
  period: Date;
  requests: bigint;
  limited: bigint;
}

/** Counts of one operation in one period. */
export interface UsageOperationRow extends UsagePeriodRow {
  operation: UsageOperation;
}

/** One key's counts over a range of hours. */
export interface KeyTotalRow {
  keyId: bigint;
  requests: bigint;
  limited: bigint;
}

/** The SQL expression of a row's period: its hour, or its UTC day. */
function periodOf(granularity: 'hour' | 'day'): Prisma.Sql {
  return granularity === 'hour' ? Prisma.sql`"hour"` : Prisma.sql`date_trunc('day', "hour", 'UTC')`;
}

/**
 * Every statement on key_usage: the batched add of the flush (our own SQL: it runs every few
 * seconds on every instance, ARCHITECTURE.md, "Data access"), the reads of the admin API, the
 * console and the key tool, and the purge.
 */
@Injectable()
export class KeyUsageRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Adds the rows' counts to the table in one statement. */
  async add(rows: readonly UsageRow[]): Promise<void> {
    const keyIds: string[] = [];
    const hours: string[] = [];
    const operations: string[] = [];
    const requests: string[] = [];
    const limited: string[] = [];
    for (const row of rows) {
      keyIds.push(row.keyId);
      hours.push(new Date(row.hour).toISOString());
      operations.push(row.operation);
      requests.push(String(row.requests));
      limited.push(String(row.limited));
    }
    await this.prisma.database.query(ADD, [keyIds, hours, operations, requests, limited]);
  }

  /** A key's counts by hour or UTC day in [from, to), all operations summed, oldest first. */
  async byPeriod(keyId: bigint, from: Date, to: Date, granularity: 'hour' | 'day'): Promise<UsagePeriodRow[]> {
    return this.prisma.$queryRaw<UsagePeriodRow[]>`
        SELECT ${periodOf(granularity)} AS "period",
               sum("requests")::bigint AS "requests", sum("limited")::bigint AS "limited"
        FROM "key_usage"
        WHERE "key_id" = ${keyId} AND "hour" >= ${from} AND "hour" < ${to}
        GROUP BY 1 ORDER BY 1`;
  }

  /** A key's counts by hour or UTC day and operation in [from, to), oldest first, operations by name. */
  async byPeriodAndOperation(
    keyId: bigint,
    from: Date,
    to: Date,
    granularity: 'hour' | 'day',
  ): Promise<UsageOperationRow[]> {
    return this.prisma.$queryRaw<UsageOperationRow[]>`
        SELECT ${periodOf(granularity)} AS "period", "operation",
               sum("requests")::bigint AS "requests", sum("limited")::bigint AS "limited"
        FROM "key_usage"
        WHERE "key_id" = ${keyId} AND "hour" >= ${from} AND "hour" < ${to}
        GROUP BY 1, 2 ORDER BY 1, 2`;
  }

  /**
   * Every key's counts summed by hour or UTC day in [from, to), oldest first: from usage_hours,
   * the sums over all keys that the migrations' trigger keeps of every hour in key_usage.
   */
  async totals(from: Date, to: Date, granularity: 'hour' | 'day'): Promise<UsagePeriodRow[]> {
    return this.prisma.$queryRaw<UsagePeriodRow[]>`
        SELECT ${periodOf(granularity)} AS "period",
               sum("requests")::bigint AS "requests", sum("limited")::bigint AS "limited"
        FROM "usage_hours"
        WHERE "hour" >= ${from} AND "hour" < ${to}
        GROUP BY 1 ORDER BY 1`;
  }

  /**
   * The `limit` keys with the most requests in [from, to), most first (ties by id). The whole UTC
   * days of the range are read from key_usage_days (each key's sums per day, kept by the
   * migrations' trigger); a day the range covers in part, from key_usage (topKeysParts).
   */
  async topKeys(from: Date, to: Date, limit: number): Promise<KeyTotalRow[]> {
    const { days, head, tail } = await this.topKeysParts(from, to);
    const hours = (part: HourPart) => Prisma.sql`
          SELECT "key_id", ${part.sign}::bigint * "requests", ${part.sign}::bigint * "limited", ${part.sign}::bigint
          FROM "key_usage" WHERE "hour" >= ${part.from} AND "hour" < ${part.to}`;
    return this.prisma.$queryRaw<KeyTotalRow[]>`
        SELECT "key_id" AS "keyId", sum("requests")::bigint AS "requests", sum("limited")::bigint AS "limited"
        FROM (
          SELECT "key_id", "requests", "limited", "rows" FROM "key_usage_days" WHERE "day" >= ${days.from} AND "day" < ${days.to}
          UNION ALL ${hours(head)}
          UNION ALL ${hours(tail)}
        ) AS "usage" ("key_id", "requests", "limited", "rows")
        GROUP BY 1 HAVING sum("rows") > 0 ORDER BY 2 DESC, 1 LIMIT ${limit}::int`;
  }

  /**
   * How topKeys reads [from, to): the whole UTC days from their sums, and a day at either end that
   * the range covers in part either as its hours in the range, added, or as the whole day's sums
   * less its hours outside the range, whichever reads fewer key_usage rows (usage_hours counts
   * them): the last 168 hours up to now read the hours of the first day before the range, since
   * those after now hold none. A range within one day reads its hours.
   */
  private async topKeysParts(
    from: Date,
    to: Date,
  ): Promise<{ days: { from: Date; to: Date }; head: HourPart; tail: HourPart }> {
    const none = (at: Date): HourPart => ({ from: at, to: at, sign: 1 });
    const firstDay = new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS);
    const endDay = new Date(Math.floor(to.getTime() / DAY_MS) * DAY_MS);
    if (firstDay > endDay) return { days: none(to), head: { from, to, sign: 1 }, tail: none(to) };
    if (from >= firstDay && to <= endDay) return { days: { from, to }, head: none(from), tail: none(to) };
    const headDay = new Date(firstDay.getTime() - DAY_MS);
    const tailEnd = new Date(endDay.getTime() + DAY_MS);
    const counts = await this.prisma.$queryRaw<{ hour: Date; rows: bigint }[]>`
        SELECT "hour", "rows" FROM "usage_hours"
        WHERE "hour" >= ${headDay} AND "hour" < ${tailEnd} AND ("hour" < ${firstDay} OR "hour" >= ${endDay})`;
    const rowsIn = (a: Date, b: Date) =>
      counts.reduce((n, c) => (c.hour >= a && c.hour < b ? n + Number(c.rows) : n), 0);
    const days = { from: firstDay, to: endDay };
    let head = none(firstDay);
    let tail = none(endDay);
    if (from < firstDay) {
      if (rowsIn(headDay, from) < rowsIn(from, firstDay)) {
        days.from = headDay;
        head = { from: headDay, to: from, sign: -1 };
      } else head = { from, to: firstDay, sign: 1 };
    }
    if (endDay < to) {
      if (rowsIn(to, tailEnd) < rowsIn(endDay, to)) {
        days.to = tailEnd;
        tail = { from: to, to: tailEnd, sign: -1 };
      } else tail = { from: endDay, to, sign: 1 };
    }
    return { days, head, tail };
  }

  /** The counts of each of `keyIds` in [from, to); keys without requests are left out. */
  async keyTotals(keyIds: readonly bigint[], from: Date, to: Date): Promise<KeyTotalRow[]> {
    if (keyIds.length === 0) return [];
    return this.prisma.$queryRaw<KeyTotalRow[]>`
        SELECT "key_id" AS "keyId", sum("requests")::bigint AS "requests", sum("limited")::bigint AS "limited"
        FROM "key_usage"
        WHERE "key_id" = ANY(${keyIds.map(String)}::bigint[]) AND "hour" >= ${from} AND "hour" < ${to}
        GROUP BY 1`;
  }

  /**
   * Deletes up to PURGE_BATCH rows of hours before `before`, locking them with FOR UPDATE SKIP
   * LOCKED (rows another instance is deleting, or a flush is adding to, are left alone); how many.
   */
  async deleteBeforeBatch(before: Date): Promise<number> {
    return this.prisma.$executeRaw`
        DELETE FROM "key_usage" WHERE ("key_id", "hour", "operation") IN (
          SELECT "key_id", "hour", "operation" FROM "key_usage"
          WHERE "hour" < ${before} ORDER BY "hour" LIMIT ${PURGE_BATCH}
          FOR UPDATE SKIP LOCKED)`;
  }
}
