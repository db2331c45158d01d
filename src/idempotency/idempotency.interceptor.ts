import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { catchError, from, mergeMap, Observable, of, throwError } from 'rxjs';
import { requestContext } from '../request-context/request-context.js';
import { IDEMPOTENT_REPLAYED_HEADER, parseIdempotencyKey, requestFingerprint } from './idempotency-key.js';
import { IdempotencyService } from './idempotency.service.js';
import type { StoredResponse } from './idempotency.types.js';
import { IdempotentCall, IdempotentReplay } from './idempotent-call.js';

export const IDEMPOTENT_OPERATION = Symbol('animal-store.idempotent-operation');
const CALL = Symbol('animal-store.idempotency.call');

type IdempotentRequest = Request & { [CALL]?: IdempotentCall };

/** The request's Idempotency-Key as the handler uses it; undefined without the header. */
export function idempotentCallOf(req: Request): IdempotentCall | undefined {
  return (req as IdempotentRequest)[CALL];
}

/**
 * Idempotency-Key for the operation it decorates (see @Idempotent). Runs after the guards (so
 * the API key is known, and every answer carries the rate-limit headers) and after
 * JsonBodyInterceptor (@JsonBody() sits below @Idempotent(), so the body is parsed):
 *
 * - no header: the handler runs as usual;
 * - a malformed key: 400 invalid_parameter;
 * - otherwise the handler gets an IdempotentCall (@IdempotentCallParam()) and records its
 *   response with the work it does. When the key already holds this request's response, the
 *   handler throws IdempotentReplay and the interceptor answers the first response again
 *   (status, body, Location) with Idempotent-Replayed: true. If the handler fails, validation
 *   included, nothing stays recorded for the key: a retry runs afresh.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<IdempotentRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    const key = parseIdempotencyKey(req.headers['idempotency-key']);
    if (key === undefined) return next.handle();
    const principal = requestContext(req).admission?.principal;
    // Guards ran first: an operation with @Idempotent is never @Public.
    if (!principal) throw new Error('Idempotency-Key on a request without an authenticated API key');
    const operation =
      this.reflector.get<string>(IDEMPOTENT_OPERATION, context.getHandler()) ?? `${req.method} ${req.path}`;
    const call = new IdempotentCall(
      { apiKeyId: BigInt(principal.keyId), key, fingerprint: requestFingerprint(operation, req.body) },
      this.idempotency,
    );
    req[CALL] = call;
    return next
      .handle()
      .pipe(
        catchError((err: unknown) =>
          err instanceof IdempotentReplay
            ? of(replay(res, err.response))
            : from(call.failed(err)).pipe(mergeMap((e) => throwError(() => e))),
        ),
      );
  }
}

/** Sets the stored response's status and headers; returns its body, a string written as it is. */
function replay(res: Response, { status, body, location }: StoredResponse): string {
  res.status(status);
  if (location) res.setHeader('Location', location);
  res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  return body;
}
