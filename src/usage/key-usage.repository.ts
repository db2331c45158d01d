import { Injectable } from '@nestjs/common';
import type { PreparedStatement } from '../database/database.js';
import { PrismaService } from '../database/prisma.service.js';
import type { UsageRow } from './usage-counts.js';

/** Rows one DELETE of the purge removes (one short statement each, so no lock is held long). */
export const PURGE_BATCH = 1_000;

/**
 * Adds a batch of counts, one row per key and hour, in one statement: the batch comes as four
 * arrays of equal length, and a row already written (by another instance, or an earlier flush)
 * gets the counts added to it. The rows are taken in key and hour order, so instances writing
 * batches that share rows lock them in the same order and never deadlock each other.
 */
const ADD: PreparedStatement = {
  name: 'key_usage_add',
  text:
    'INSERT INTO "key_usage" ("key_id", "hour", "requests", "limited") ' +
    'SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bigint[], $4::bigint[]) AS "batch" ("key_id", "hour", "requests", "limited") ' +
    'ORDER BY "key_id", "hour" ' +
    'ON CONFLICT ("key_id", "hour") DO UPDATE SET "requests" = "key_usage"."requests" + excluded."requests", ' +
    '"limited" = "key_usage"."limited" + excluded."limited"',
};

/** A key's counts in one period (an hour, or a UTC day summed from its hours). */
export interface UsagePeriodRow {
  period: Date;
  requests: bigint;
  limited: bigint;
}

/**
 * Every statement on key_usage: the batched add of the flush (our own SQL: it runs every few
 * seconds on every instance, ARCHITECTURE.md, "Data access"), the reads of the admin API and
 * the key tool, and the purge.
 */
@Injectable()
export class KeyUsageRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Adds the rows' counts to the table in one statement. */
  async add(rows: readonly UsageRow[]): Promise<void> {
    const keyIds: string[] = [];
    const hours: string[] = [];
    const requests: string[] = [];
    const limited: string[] = [];
    for (const row of rows) {
      keyIds.push(row.keyId);
      hours.push(new Date(row.hour).toISOString());
      requests.push(String(row.requests));
      limited.push(String(row.limited));
    }
    await this.prisma.database.query(ADD, [keyIds, hours, requests, limited]);
  }

  /** A key's counts by hour in [from, to), oldest first. */
  async byHour(keyId: bigint, from: Date, to: Date): Promise<UsagePeriodRow[]> {
    const rows = await this.prisma.keyUsage.findMany({
      where: { keyId, hour: { gte: from, lt: to } },
      orderBy: { hour: 'asc' },
      select: { hour: true, requests: true, limited: true },
    });
    return rows.map((r) => ({ period: r.hour, requests: r.requests, limited: r.limited }));
  }

  /** A key's counts by UTC day in [from, to), oldest first (`from` and `to` are whole days). */
  async byDay(keyId: bigint, from: Date, to: Date): Promise<UsagePeriodRow[]> {
    return this.prisma.$queryRaw<UsagePeriodRow[]>`
        SELECT date_trunc('day', "hour", 'UTC') AS "period",
               sum("requests")::bigint AS "requests", sum("limited")::bigint AS "limited"
        FROM "key_usage"
        WHERE "key_id" = ${keyId} AND "hour" >= ${from} AND "hour" < ${to}
        GROUP BY 1 ORDER BY 1`;
  }

  /**
   * Deletes up to PURGE_BATCH rows of hours before `before`, locking them with FOR UPDATE SKIP
   * LOCKED (rows another instance is deleting, or a flush is adding to, are left alone); how many.
   */
  async deleteBeforeBatch(before: Date): Promise<number> {
    return this.prisma.$executeRaw`
        DELETE FROM "key_usage" WHERE ("key_id", "hour") IN (
          SELECT "key_id", "hour" FROM "key_usage"
          WHERE "hour" < ${before} ORDER BY "hour" LIMIT ${PURGE_BATCH}
          FOR UPDATE SKIP LOCKED)`;
  }
}
