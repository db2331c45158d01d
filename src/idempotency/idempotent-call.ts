import { ApiError } from '../errors/api-error.js';
import { reusedKey } from './idempotency-errors.js';
import type { IdempotencyClaim, IdempotencyService } from './idempotency.service.js';
import type { CompletedRecord, IdempotencyScope, ResponseAroundId, StoredResponse } from './idempotency.types.js';

/** Thrown by IdempotentCall.claim() when the key already holds this request's response. */
export class IdempotentReplay {
  constructor(readonly response: StoredResponse) {}
}

/**
 * A request with an Idempotency-Key, in its handler's hands. The handler first tries the work
 * and its completed record in one statement (record() gives the record's columns); a key that
 * turns out to be recorded already goes through claim(), which decides as for any retry: the
 * earlier response (thrown as IdempotentReplay, which IdempotencyInterceptor answers), a 409 or
 * 422, or a claim on an expired or abandoned key that the handler completes in the transaction
 * doing its work.
 */
export class IdempotentCall {
  private held?: IdempotencyClaim;

  constructor(
    readonly scope: IdempotencyScope,
    private readonly service: IdempotencyService,
  ) {}

  /** The completed record of a first request, to be written by the statement that does the work. */
  record(response: ResponseAroundId): CompletedRecord {
    return this.service.completedRecord(this.scope, response);
  }

  /** For a key already recorded: a claim to complete, or throws (replay, 409, 422). */
  async claim(): Promise<IdempotencyClaim> {
    const outcome = await this.service.claim(this.scope);
    if (outcome.kind === 'replay') throw new IdempotentReplay(outcome.response);
    this.held = outcome.claim;
    return outcome.claim;
  }

  /**
   * What the client gets when the handler failed with `err`. A claim held is given back, so a
   * retry runs afresh. A body refused before any write (400) is a 422 instead when the key was
   * already used with another body, as the key's reuse is the client's first mistake.
   */
  async failed(err: unknown): Promise<unknown> {
    if (this.held) {
      await this.held.release();
      return err;
    }
    if (!(err instanceof ApiError) || err.status !== 400) return err;
    return (await this.service.reusedWithOtherBody(this.scope).catch(() => false)) ? reusedKey() : err;
  }
}
