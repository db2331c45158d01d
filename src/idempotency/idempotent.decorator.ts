import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import type { Request } from 'express';
import { ApiErrorResponses } from '../errors/api-responses.decorator.js';
import { IDEMPOTENCY_KEY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency-key.js';
import { IDEMPOTENT_OPERATION, idempotentCallOf, IdempotencyInterceptor } from './idempotency.interceptor.js';

/**
 * Makes an operation accept Idempotency-Key (docs/api.md, "Idempotent retries"), and documents the header
 * with its 409 and 422 in the OpenAPI document. `operation` names the operation in the
 * request fingerprint. The handler records its response through @IdempotentCallParam().
 */
export function Idempotent(operation: string): MethodDecorator {
  return applyDecorators(
    SetMetadata(IDEMPOTENT_OPERATION, operation),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: false,
      description:
        'Makes the request safe to retry. A retry with the same key and body from the same API key ' +
        'within 24 hours replays the first response (marked `Idempotent-Replayed: true`) and creates ' +
        'nothing; the same key with a different body is a 422, and a retry while the first request is ' +
        `still running a 409. The key is 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters (a UUID is a good choice), ` +
        'sent preferably as a Structured Field string (RFC 8941, as draft-ietf-httpapi-idempotency-key-header asks): ' +
        'in double quotes, with `\\"` and `\\\\` escaped. The bare key, unquoted, is the same key.',
      schema: {
        type: 'string',
        minLength: 1,
        maxLength: 1024,
        pattern: '^[\\x21-\\x7E]([\\x20-\\x7E]*[\\x21-\\x7E])?$',
        example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
      },
    }),
    ApiErrorResponses(409, 422),
  );
}

/** The request's IdempotentCall (undefined without an Idempotency-Key), for the handler. */
export const IdempotentCallParam = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  idempotentCallOf(context.switchToHttp().getRequest<Request>()),
);
