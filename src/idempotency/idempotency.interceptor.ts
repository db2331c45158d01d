import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { catchError, from, mergeMap, Observable, of, throwError } from 'rxjs';
import { requestContext } from '../http/request-context.js';
import { IDEMPOTENT_REPLAYED_HEADER, parseIdempotencyKey, requestFingerprint } from './idempotency-key.js';
import { IdempotencyClaim, IdempotencyService } from './idempotency.service.js';

export const IDEMPOTENT_OPERATION = Symbol('animal-store.idempotent-operation');
const CLAIM = Symbol('animal-store.idempotency.claim');

type IdempotentRequest = Request & { [CLAIM]?: IdempotencyClaim };

/** The claim the interceptor holds for this request; undefined without an Idempotency-Key. */
export function claimOf(req: Request): IdempotencyClaim | undefined {
  return (req as IdempotentRequest)[CLAIM];
}

/**
 * Idempotency-Key for the operation it decorates (see @Idempotent). Runs after the guards (so
 * the API key is known, and every answer carries the rate-limit headers) and after the global
 * body interceptor (so the body is parsed):
 *
 * - no header: the handler runs as usual;
 * - a malformed key: 400 invalid_parameter;
 * - a replay: the first response again (status, body, Location) with Idempotent-Replayed: true,
 *   and the handler does not run;
 * - a claim: the handler runs, and must record its response with the claim, in the transaction
 *   that does its work (the controller gets it with @IdempotencyClaimParam()). If the handler
 *   fails, validation included, the claim is released: a retry runs afresh.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly reflector: Reflector,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = context.switchToHttp().getRequest<IdempotentRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    const key = parseIdempotencyKey(req.headers['idempotency-key']);
    if (key === undefined) return next.handle();
    const principal = requestContext(req).admission?.principal;
    // Guards ran first: an operation with @Idempotent is never @Public.
    if (!principal) throw new Error('Idempotency-Key on a request without an authenticated API key');
    const operation = this.reflector.get<string>(IDEMPOTENT_OPERATION, context.getHandler()) ?? `${req.method} ${req.path}`;
    const fingerprint = requestFingerprint(operation, req.body);

    const outcome = await this.idempotency.claim({ apiKeyId: BigInt(principal.keyId), key, fingerprint });
    if (outcome.kind === 'replay') {
      const { status, body, location } = outcome.response;
      res.status(status);
      if (location) res.setHeader('Location', location);
      res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      return of(body); // a string: written as it is
    }
    const claim = outcome.claim;
    req[CLAIM] = claim;
    return next.handle().pipe(catchError((err: unknown) => from(claim.release()).pipe(mergeMap(() => throwError(() => err)))));
  }
}
