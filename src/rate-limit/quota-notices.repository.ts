import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service.js';
import type { Prisma } from '../generated/prisma/client.js';
import { WRITE_TRANSACTION } from '../database/transactions.js';
import type { QuotaCrossing } from './quota-crossings.js';

type Db = Prisma.TransactionClient;

/** A key's notices of days this long before a batch's oldest are deleted when it crosses again. */
export const NOTICE_KEPT_DAYS = 7;

/** Every statement on key_quota_notices: the thresholds of keys' day windows announced. */
@Injectable()
export class QuotaNoticesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, WRITE_TRANSACTION);
  }

  /**
   * Records the crossings' notices, each once whoever records it first (another instance, this
   * one before a restart); the crossings recorded by this call. A crossing of a key that is not
   * there is left out. Rows are inserted in key order, so instances recording batches that share
   * notices lock them in the same order. The batch's keys' notices older than NOTICE_KEPT_DAYS
   * before its oldest day go first (their days cannot be announced again), so the table holds a
   * few rows per key, without a purge of its own.
   */
  async record(crossings: readonly QuotaCrossing[], db: Db): Promise<QuotaCrossing[]> {
    if (crossings.length === 0) return [];
    const keyIds = crossings.map((c) => c.keyId);
    const days = crossings.map((c) => utcDay(c.dayMs));
    const thresholds = crossings.map((c) => c.threshold);
    const oldest = crossings.reduce((min, c) => Math.min(min, c.dayMs), Infinity);
    await db.$executeRaw`
      DELETE FROM "key_quota_notices"
       WHERE "key_id" = ANY(${keyIds}::bigint[]) AND "day" < ${utcDay(oldest - NOTICE_KEPT_DAYS * 86_400_000)}::date`;
    const recorded = await db.$queryRaw<{ keyId: bigint; day: string; threshold: number }[]>`
      INSERT INTO "key_quota_notices" ("key_id", "day", "threshold")
      SELECT "batch"."key_id", "batch"."day", "batch"."threshold"
        FROM unnest(${keyIds}::bigint[], ${days}::date[], ${thresholds}::smallint[])
             AS "batch" ("key_id", "day", "threshold")
        JOIN "api_keys" ON "api_keys"."id" = "batch"."key_id"
       ORDER BY "batch"."key_id", "batch"."day", "batch"."threshold"
      ON CONFLICT DO NOTHING
      RETURNING "key_id" AS "keyId", "day"::text AS "day", "threshold"`;
    const wanted = new Set(recorded.map((r) => `${r.keyId}:${r.day}:${r.threshold}`));
    return crossings.filter((c) => wanted.has(`${c.keyId}:${utcDay(c.dayMs)}:${c.threshold}`));
  }
}

/** The UTC date of an instant, as PostgreSQL writes a DATE (YYYY-MM-DD). */
function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
