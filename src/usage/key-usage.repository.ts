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
   * migrations' trigger), the hours before the first and after the last from key_usage.
   */
  async topKeys(from: Date, to: Date, limit: number): Promise<KeyTotalRow[]> {
    const firstDay = new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS);
    const endDay = new Date(Math.floor(to.getTime() / DAY_MS) * DAY_MS);
    // Without a whole day in the range, every hour of it comes from key_usage.
    const daysFrom = firstDay < endDay ? firstDay : to;
    const daysTo = firstDay < endDay ? endDay : to;
    return this.prisma.$queryRaw<KeyTotalRow[]>`
        SELECT "key_id" AS "keyId", sum("requests")::bigint AS "requests", sum("limited")::bigint AS "limited"
        FROM (
          SELECT "key_id", "requests", "limited" FROM "key_usage_days" WHERE "day" >= ${daysFrom} AND "day" < ${daysTo}
          UNION ALL
          SELECT "key_id", "requests", "limited" FROM "key_usage" WHERE "hour" >= ${from} AND "hour" < ${daysFrom}
          UNION ALL
          SELECT "key_id", "requests", "limited" FROM "key_usage" WHERE "hour" >= ${daysTo} AND "hour" < ${to}
        ) AS "usage"
        GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${limit}::int`;
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
