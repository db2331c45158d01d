import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { DB_RETRY_AFTER_SECONDS } from './database-errors.js';
import type { ErrorBody, ErrorCode, ErrorDetail } from './api-error.js';
import { ErrorDto } from './error.dto.js';

/** One documented error status: what it means and, per code the service answers it with, an example. */
export interface ErrorResponseDoc {
  meaning: string;
  examples: Partial<Record<ErrorCode, { message: string; details?: ErrorDetail[] }>>;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
}

/**
 * Every status the operations' errors (ApiError) are answered with, and the codes of each,
 * each with an example body shaped as the service writes it. src/errors/api-responses.spec.ts
 * checks this table and EDGE_ERRORS against the `new ApiError('code', …)` of the
 * source, both ways, so a new code or a code moved to another status shows up here.
 */
export const ERROR_RESPONSES: Record<number, ErrorResponseDoc> = {
  400: {
    meaning: 'The request holds invalid values',
    examples: {
      validation_failed: {
        message: 'name must be 1 to 255 characters long',
        details: [{ field: 'name', message: 'name must be 1 to 255 characters long' }],
      },
      malformed_json: { message: 'The request body is not valid JSON: Unexpected end of input.' },
      invalid_parameter: {
        message: 'petId must be an integer from 1 to 9223372036854775807.',
        details: [{ field: 'petId', message: 'petId must be an integer from 1 to 9223372036854775807' }],
      },
      unknown_parameter: {
        message: 'Unknown parameter: colour.',
        details: [{ field: 'colour', message: 'colour is not an accepted parameter' }],
      },
    },
  },
  401: {
    meaning:
      'The API key is missing, not valid (unknown, revoked or forged) or expired; or a signed report is not signed by a current key',
    examples: {
      missing_api_key: { message: 'An API key is required: send it as "Authorization: Bearer <key>".' },
      invalid_api_key: { message: 'The API key is not valid: it is unknown or has been revoked.' },
      api_key_expired: { message: 'The API key expired at 2026-11-01T00:00:00.000Z; ask for a new one.' },
      invalid_signature: {
        message:
          'The report is not signed by a current GitHub secret scanning key: Github-Public-Key-Identifier and Github-Public-Key-Signature must verify over the body.',
      },
    },
    headers: {
      'WWW-Authenticate': {
        description: 'The bearer challenge (RFC 6750).',
        schema: { type: 'string', example: 'Bearer realm="animal-store"' },
      },
    },
  },
  403: {
    meaning: 'The API key lacks the scope the operation needs',
    examples: {
      insufficient_scope: { message: 'This API key lacks the scope pets:write this operation needs.' },
    },
  },
  404: {
    meaning: 'The animal does not exist',
    examples: {
      not_found: { message: 'No animal has id 42.' },
    },
  },
  409: {
    meaning: 'A request with the same Idempotency-Key is still in flight',
    examples: {
      idempotency_key_in_flight: {
        message: 'A request with this Idempotency-Key is still being processed; retry after it has finished.',
      },
    },
    headers: {
      'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
    },
  },
  410: {
    meaning: 'The operation has passed its sunset date',
    examples: {
      gone: {
        message:
          'GET /pets/{petId} was removed on Thu, 05 Dec 2030 00:00:00 GMT; use GET /pets with the status filter.',
      },
    },
  },
  413: {
    meaning: 'The request body is larger than 16 KiB',
    examples: { payload_too_large: { message: 'The request body must be at most 16384 bytes.' } },
  },
  415: {
    meaning: 'The request body is not UTF-8 application/json',
    examples: { unsupported_media_type: { message: 'The request body must be application/json.' } },
  },
  422: {
    meaning: 'The Idempotency-Key was used with a different request body',
    examples: {
      idempotency_key_reused: {
        message:
          'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
      },
    },
  },
  429: {
    meaning: 'Over the rate limit, or the key is banned for calling while limited; wait Retry-After seconds',
    examples: {
      rate_limit_exceeded: {
        message: 'Rate limit exceeded for this API key (60 requests per minute); retry after 17 seconds.',
      },
      api_key_temporarily_banned: {
        message: 'Too many requests were sent while rate limited: this API key is banned for 840 more seconds.',
      },
    },
  },
  500: {
    meaning: 'An unexpected error (logged by the service with the X-Request-Id)',
    examples: { internal_error: { message: 'An unexpected error occurred.' } },
  },
  503: {
    meaning: 'The database cannot be reached, or too many unknown API keys are being checked; wait Retry-After seconds',
    examples: { service_unavailable: { message: 'The service is temporarily unavailable; retry later.' } },
    headers: {
      'Retry-After': {
        description: 'Whole seconds to wait before retrying.',
        schema: { type: 'integer', minimum: 1, example: DB_RETRY_AFTER_SECONDS },
      },
    },
  },
};

/**
 * The answers of the edge and of routing, not of an operation: a request head refused before
 * routing (too many header fields, a transfer coding not applied), a path no route answers, a
 * method a path does not take (docs/api.md, "Errors"; docs/security.md, "Input limits"). They
 * have no operation to be documented on.
 */
export const EDGE_ERRORS = [
  '431 headers_too_large',
  '501 not_implemented',
  '404 route_not_found',
  '405 method_not_allowed',
] as const;

/** The request id the examples show (the response's X-Request-Id). */
export const EXAMPLE_REQUEST_ID = '5f0c6c1e-8d7a-4f43-9a53-6a3e0c9b2d11';

/**
 * The admin API's error statuses (docs/admin-api.md): its own 400 (a key's values), 401 (the
 * admin token), 404 (a key) and 429 (unknown tokens from one address), and the public API's for the rest.
 */
export const ADMIN_ERROR_RESPONSES: Record<number, ErrorResponseDoc> = {
  400: {
    meaning: 'The request holds invalid values, or asks a change a revoked or expired key cannot take',
    examples: {
      validation_failed: {
        message: 'plan must be one of free, pro, business, enterprise, got "gold"',
        details: [{ field: 'plan', message: 'plan must be one of free, pro, business, enterprise, got "gold"' }],
      },
      malformed_json: ERROR_RESPONSES[400].examples.malformed_json,
      invalid_parameter: {
        message: 'id must be an integer from 1 to 9223372036854775807.',
        details: [{ field: 'id', message: 'id must be an integer from 1 to 9223372036854775807' }],
      },
      unknown_parameter: ERROR_RESPONSES[400].examples.unknown_parameter,
    },
  },
  401: {
    meaning: 'The admin token is missing, or not a live admin token (unknown, revoked, or an API key)',
    examples: {
      missing_admin_token: { message: 'An admin token is required: send it as "Authorization: Bearer <token>".' },
      invalid_admin_token: { message: 'The admin token is not valid: it is unknown or has been revoked.' },
    },
    headers: ERROR_RESPONSES[401].headers,
  },
  404: {
    meaning: 'The API key, webhook endpoint or delivery does not exist',
    examples: { not_found: { message: 'No API key has id 42.' } },
  },
  413: ERROR_RESPONSES[413],
  429: {
    meaning:
      'This client address sent too many unknown admin tokens this minute: its new tokens are not checked until Retry-After seconds have passed (tokens already seen by the instance still work)',
    examples: {
      rate_limit_exceeded: {
        message:
          'Too many unknown admin tokens were sent from this client address this minute; its new tokens are checked again in 42 seconds.',
      },
    },
    headers: {
      'Retry-After': {
        description: 'Whole seconds until the minute ends and the address may try new tokens again.',
        schema: { type: 'integer', minimum: 1, maximum: 60, example: 42 },
      },
    },
  },
  415: ERROR_RESPONSES[415],
  500: ERROR_RESPONSES[500],
  501: {
    meaning: 'Webhooks need PostgreSQL (DATABASE_URL): the embedded database has no delivery queue',
    examples: {
      not_implemented: {
        message: 'Webhooks need PostgreSQL (DATABASE_URL); the embedded database has no delivery queue.',
      },
    },
  },
  503: {
    meaning:
      'The database cannot be reached, or too many unknown admin tokens are being checked at once; wait Retry-After seconds',
    examples: ERROR_RESPONSES[503].examples,
    headers: ERROR_RESPONSES[503].headers,
  },
};

/** The example Error body of `code` at `status` (of the public API's table unless told). */
export function exampleBody(
  status: number,
  code: ErrorCode,
  table: Record<number, ErrorResponseDoc> = ERROR_RESPONSES,
): ErrorBody {
  const example = table[status].examples[code];
  if (example === undefined) throw new Error(`no example of ${code} at ${status}`);
  return {
    code,
    message: example.message,
    status,
    ...(example.details ? { details: example.details } : {}),
    requestId: EXAMPLE_REQUEST_ID,
  };
}

/** An error status of an operation: all its codes, or only those the operation can answer. */
export type ErrorResponseSpec = number | { status: number; codes: ErrorCode[] };

/** Documents the Error responses an operation can return, each with an example per code. */
export function ApiErrorResponses(...specs: ErrorResponseSpec[]): MethodDecorator & ClassDecorator {
  return errorResponses(ERROR_RESPONSES, specs);
}

/** ApiErrorResponses for the admin API's operations (ADMIN_ERROR_RESPONSES). */
export function AdminErrorResponses(...specs: ErrorResponseSpec[]): MethodDecorator & ClassDecorator {
  return errorResponses(ADMIN_ERROR_RESPONSES, specs);
}

function errorResponses(
  table: Record<number, ErrorResponseDoc>,
  specs: ErrorResponseSpec[],
): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...specs.map((spec) => {
      const status = typeof spec === 'number' ? spec : spec.status;
      const doc = table[status];
      if (doc === undefined) throw new Error(`ERROR_RESPONSES documents no ${status}`);
      const codes = typeof spec === 'number' ? (Object.keys(doc.examples) as ErrorCode[]) : spec.codes;
      return ApiResponse({
        status,
        description: `${doc.meaning} (${codes.map((c) => `\`${c}\``).join(', ')}).`,
        type: ErrorDto,
        examples: Object.fromEntries(
          codes.map((code) => [code, { summary: code, value: exampleBody(status, code, table) }]),
        ),
        ...(doc.headers ? { headers: doc.headers } : {}),
      });
    }),
  );
}
