import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { inFlight, reusedKey } from './idempotency-errors.js';
import { Clock } from '../time/clock.js';
import { stringifyJson } from '../json/json-codec.js';
import type { Prisma } from '../generated/prisma/client.js';
import { IdempotencyKeysRepository, PURGE_BATCH, type FreshClaim } from './idempotency-keys.repository.js';
import type {
  CompletedRecord,
  IdempotencyScope,
  ResponseAroundId,
  ResponseToStore,
  StoredResponse,
} from './idempotency.types.js';

/** How long a key is remembered: 24 hours (docs/api.md, "Idempotent retries"). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A claim still in flight after this long belongs to a request that cannot be running any more
 * (its process died, or its connection to the database did): another request with the same key
 * takes it over. Far above the longest a create may take (WRITE_TRANSACTION.timeout, src/database/transactions.ts).
 */
export const IN_FLIGHT_TIMEOUT_MS = 60_000;
/** Expired keys are deleted this often: every one that has expired when a round starts. */
export const PURGE_INTERVAL_MS = 10 * 60_000;

/**
 * The right to run an idempotent request: held from the claim until the response is recorded
 * (complete, inside the transaction that does the work) or the claim is given back (release).
 */
export class IdempotencyClaim {
  constructor(
    readonly scope: IdempotencyScope,
    readonly token: string,
    private readonly service: IdempotencyService,
  ) {}

  /** Records the response in the caller's transaction; throws (rolling it back) if the claim was lost. */
  complete(tx: Prisma.TransactionClient, response: ResponseToStore): Promise<void> {
    return this.service.complete(tx, this, response);
  }

  /** Gives the key back after a failure, so a retry runs afresh; never throws. */
  release(): Promise<void> {
    return this.service.release(this);
  }
}

export type ClaimOutcome = { kind: 'claimed'; claim: IdempotencyClaim } | { kind: 'replay'; response: StoredResponse };

/**
 * Idempotency-Key records in PostgreSQL (table idempotency_keys), per API key, for 24 hours.
 *
 * 1. A first request writes its record completed, with its response, in the statement that
 *    does its work (completedRecord(); PetsService.create), an insert that does nothing
 *    on a conflict, so the work runs only when the key is new, and the record and the work commit
 *    together or not at all. A concurrent request with the same key waits for that statement's
 *    transaction and then finds the key recorded.
 * 2. A key already recorded goes through claim(): the same fingerprint completed → replay, still
 *    in flight → 409, another fingerprint → 422. A record older than 24 hours, or a claim
 *    abandoned in flight, is claimed afresh: an insert or an update of an in-flight row, committed on
 *    its own before any work starts, so of two concurrent requests exactly one holds it.
 * 3. A claim's work and complete() run in one transaction; complete() only updates the row while
 *    it still carries this request's claim token. On failure the claim is released (deleted) so
 *    a retry runs afresh; if even that fails (the database is gone), the claim expires after
 *    IN_FLIGHT_TIMEOUT_MS and a retry takes it over.
 *
 * Times come from the injectable Clock (the instances' clocks; the bounds are minutes apart).
 */
@Injectable()
export class IdempotencyService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private timer?: NodeJS.Timeout;
  private purging?: Promise<unknown>;
  private stopping = false;

  constructor(
    private readonly records: IdempotencyKeysRepository,
    private readonly clock: Clock,
  ) {}

  completedRecord(scope: IdempotencyScope, response: ResponseAroundId): CompletedRecord {
    const at = this.clock.now();
    return {
      ...scope,
      ...response,
      claimToken: randomUUID(),
      at,
      expiresAt: new Date(at.getTime() + IDEMPOTENCY_TTL_MS),
    };
  }

  /** Whether the key holds a live record of a request with another body. */
  async reusedWithOtherBody({ apiKeyId, key, fingerprint }: IdempotencyScope): Promise<boolean> {
    const row = await this.records.findFingerprint(apiKeyId, key);
    return row !== null && row.fingerprint !== fingerprint && row.expiresAt.getTime() > this.clock.now().getTime();
  }

  async claim(scope: IdempotencyScope): Promise<ClaimOutcome> {
    const { apiKeyId, key, fingerprint } = scope;
    // Each round either decides or lost a race to a concurrent request; a few rounds suffice.
    for (let round = 0; round < 3; round++) {
      const now = this.clock.now();
      const token = randomUUID();
      const fresh: FreshClaim = {
        fingerprint,
        state: 'in_flight',
        claimToken: token,
        claimedAt: now,
        createdAt: now,
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        responseStatus: null,
        responseBody: null,
        responseLocation: null,
      };
      // ON CONFLICT DO NOTHING: count 1 means this request inserted the row, and owns the key.
      if (await this.records.insertClaim(apiKeyId, key, fresh)) return this.claimed(scope, token);

      const row = await this.records.find(apiKeyId, key);
      if (!row) continue; // purged in between
      if (row.expiresAt.getTime() <= now.getTime()) {
        // Older than 24 hours: the key starts afresh, whatever it was used for.
        if (await this.records.resetExpired(apiKeyId, key, row.claimToken, now, fresh))
          return this.claimed(scope, token);
        continue;
      }
      if (row.fingerprint !== fingerprint) throw reusedKey();
      if (row.state === 'completed') {
        return {
          kind: 'replay',
          response: {
            status: row.responseStatus as number,
            body: row.responseBody as string,
            location: row.responseLocation,
          },
        };
      }
      if (now.getTime() - row.claimedAt.getTime() < IN_FLIGHT_TIMEOUT_MS) throw inFlight();
      // An abandoned claim: its request cannot still be running. Take it over; should that
      // request complete after all, its completion finds another token and rolls back.
      if (await this.records.takeOver(apiKeyId, key, row.claimToken, token, now)) {
        this.logger.warn(`took over an abandoned Idempotency-Key claim of API key ${apiKeyId}`);
        return this.claimed(scope, token);
      }
    }
    throw inFlight();
  }

  async complete(tx: Prisma.TransactionClient, claim: IdempotencyClaim, response: ResponseToStore): Promise<void> {
    const { apiKeyId, key } = claim.scope;
    const done = await this.records.complete(tx, apiKeyId, key, claim.token, {
      responseStatus: response.status,
      responseBody: stringifyJson(response.body),
      responseLocation: response.location ?? null,
    });
    // Taken over by a retry after IN_FLIGHT_TIMEOUT_MS: this request must not create anything.
    if (!done) throw inFlight();
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    const { apiKeyId, key } = claim.scope;
    try {
      await this.records.deleteClaim(apiKeyId, key, claim.token);
    } catch (err) {
      // The claim expires by itself (IN_FLIGHT_TIMEOUT_MS); a retry before then gets a 409.
      this.logger.warn(`could not release an Idempotency-Key claim: ${(err as Error)?.message ?? err}`);
    }
  }

  /**
   * Deletes every key that expired by `now`, in batches of PURGE_BATCH, until a batch finds
   * fewer: a round keeps pace with any rate of creates, since it ends only when the backlog it
   * started with is gone. Each batch locks the rows it deletes, skipping rows locked by others, so
   * instances purging at once take disjoint batches instead of deleting (and waiting on) the
   * same rows, and a row a claim is renewing right now is left for the next round.
   * Returns how many keys this call deleted.
   */
  async purgeExpired(now: Date = this.clock.now()): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.records.deleteExpiredBatch(now);
      total += deleted;
      if (deleted < PURGE_BATCH || this.stopping) return total;
    }
  }

  onApplicationBootstrap(): void {
    // unref: the timer never keeps the process alive. Every instance purges; SKIP LOCKED keeps
    // their batches apart.
    this.timer = setInterval(() => void this.purgeInBackground(), PURGE_INTERVAL_MS).unref();
  }

  /** Before the database closes (PrismaService closes it on application shutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    this.stopping = true; // a round in progress ends after its current batch
    await this.purging;
  }

  private purgeInBackground(): Promise<unknown> {
    this.purging ??= this.purgeExpired()
      .then((n) => n > 0 && this.logger.log(`deleted ${n} expired Idempotency-Keys`))
      .catch((err: unknown) =>
        this.logger.warn(`could not delete expired Idempotency-Keys: ${(err as Error)?.message ?? err}`),
      )
      .finally(() => (this.purging = undefined));
    return this.purging;
  }

  private claimed(scope: IdempotencyScope, token: string): ClaimOutcome {
    return { kind: 'claimed', claim: new IdempotencyClaim(scope, token, this) };
  }
}
