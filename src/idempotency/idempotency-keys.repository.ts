import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import { PrismaService } from '../database/prisma.service.js';
import type { CompletedRecord } from './idempotency.types.js';

/** Rows one DELETE of the purge removes (one short statement each, so no lock is held long). */
export const PURGE_BATCH = 1_000;

/** The columns of an in-flight claim, written when a key is claimed afresh. */
export interface FreshClaim {
  fingerprint: string;
  state: 'in_flight';
  claimToken: string;
  claimedAt: Date;
  createdAt: Date;
  expiresAt: Date;
  responseStatus: null;
  responseBody: null;
  responseLocation: null;
}

/** The response columns a claim's completion writes. */
export interface CompletedResponse {
  responseStatus: number;
  responseBody: string;
  responseLocation: string | null;
}

/**
 * The INSERT of a key's record written completed, inside a statement that draws the id of the row
 * it creates first, in a CTE named "new_id" (PetsRepository's insertWithRecord): the body is
 * bodyBeforeId + id + bodyAfterId, the Location locationBeforeId + id. ON CONFLICT DO NOTHING on
 * the key: it returns a row only when the key had no record. `$at` is the parameter of the
 * record's instant (the statement shares it with the row it creates), followed from `$first` on by
 * completedRecordValues().
 */
export function insertCompletedRecord(at: number, first: number): string {
  const p = (i: number) => `$${first + i}`;
  return `INSERT INTO "idempotency_keys" ("api_key_id", "key", "fingerprint", "state", "claim_token", "claimed_at", "created_at", "expires_at", "response_status", "response_body", "response_location")
    SELECT ${p(0)}::bigint, ${p(1)}::text, ${p(2)}::text, 'completed'::"IdempotencyState", ${p(3)}::text::uuid, $${at}::timestamptz, $${at}::timestamptz, ${p(4)}::timestamptz, ${p(5)}::int,
      ${p(6)}::text || "id"::text || ${p(7)}::text, ${p(8)}::text || "id"::text
    FROM "new_id"
    ON CONFLICT DO NOTHING
    RETURNING 1`;
}

/** insertCompletedRecord()'s parameters from `$first` on (the record's instant comes apart). */
export function completedRecordValues(record: CompletedRecord): unknown[] {
  return [
    record.apiKeyId,
    record.key,
    record.fingerprint,
    record.claimToken,
    record.expiresAt,
    record.status,
    record.bodyBeforeId,
    record.bodyAfterId,
    record.locationBeforeId,
  ];
}

/**
 * Every statement on idempotency_keys (through Prisma: a claim is not on the hot path of a
 * request, ARCHITECTURE.md, "Data access"), except the completed record a create writes in its
 * own statement (insertCompletedRecord). A record is found by its API key and key.
 */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The fingerprint and expiry of a key's record, or null. */
  async findFingerprint(apiKeyId: bigint, key: string): Promise<{ fingerprint: string; expiresAt: Date } | null> {
    return this.prisma.idempotencyKey.findUnique({
      where: { apiKeyId_key: { apiKeyId, key } },
      select: { fingerprint: true, expiresAt: true },
    });
  }

  /** A key's record, or null. */
  async find(apiKeyId: bigint, key: string) {
    return this.prisma.idempotencyKey.findUnique({ where: { apiKeyId_key: { apiKeyId, key } } });
  }

  /** Inserts a claim unless the key has a record (ON CONFLICT DO NOTHING); whether it did. */
  async insertClaim(apiKeyId: bigint, key: string, fresh: FreshClaim): Promise<boolean> {
    const inserted = await this.prisma.idempotencyKey.createMany({
      data: [{ apiKeyId, key, ...fresh }],
      skipDuplicates: true,
    });
    return inserted.count === 1;
  }

  /** Overwrites a record expired by `now` that still carries `claimToken`; whether it did. */
  async resetExpired(
    apiKeyId: bigint,
    key: string,
    claimToken: string,
    now: Date,
    fresh: FreshClaim,
  ): Promise<boolean> {
    const reset = await this.prisma.idempotencyKey.updateMany({
      where: { apiKeyId, key, claimToken, expiresAt: { lte: now } },
      data: fresh,
    });
    return reset.count === 1;
  }

  /** Gives an in-flight claim still carrying `claimToken` a new token; whether it did. */
  async takeOver(apiKeyId: bigint, key: string, claimToken: string, token: string, now: Date): Promise<boolean> {
    const taken = await this.prisma.idempotencyKey.updateMany({
      where: { apiKeyId, key, claimToken, state: 'in_flight' },
      data: { claimToken: token, claimedAt: now },
    });
    return taken.count === 1;
  }

  /** Completes an in-flight claim carrying `claimToken`, in the caller's transaction; whether it did. */
  async complete(
    tx: Prisma.TransactionClient,
    apiKeyId: bigint,
    key: string,
    claimToken: string,
    response: CompletedResponse,
  ): Promise<boolean> {
    const done = await tx.idempotencyKey.updateMany({
      where: { apiKeyId, key, claimToken, state: 'in_flight' },
      data: { state: 'completed', ...response },
    });
    return done.count === 1;
  }

  /** Deletes an in-flight claim carrying `claimToken`. */
  async deleteClaim(apiKeyId: bigint, key: string, claimToken: string): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({
      where: { apiKeyId, key, claimToken, state: 'in_flight' },
    });
  }

  /**
   * Deletes up to PURGE_BATCH records expired by `now`, locking them with FOR UPDATE SKIP LOCKED
   * (rows another instance is deleting, or a claim is renewing, are left alone); how many.
   */
  async deleteExpiredBatch(now: Date): Promise<number> {
    return this.prisma.$executeRaw`
        DELETE FROM "idempotency_keys" WHERE ("api_key_id", "key") IN (
          SELECT "api_key_id", "key" FROM "idempotency_keys"
          WHERE "expires_at" <= ${now} ORDER BY "expires_at" LIMIT ${PURGE_BATCH}
          FOR UPDATE SKIP LOCKED)`;
  }
}
