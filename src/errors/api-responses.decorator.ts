import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ErrorDto } from './error.dto.js';

const DESCRIPTIONS: Record<number, string> = {
  400: 'The request holds invalid values (`malformed_json`, `validation_failed`, `invalid_parameter`, `unknown_parameter`).',
  401: 'Missing, invalid or expired API key (`missing_api_key`, `invalid_api_key`, `api_key_expired`).',
  403: 'The API key lacks the scope the operation needs (`insufficient_scope`).',
  404: 'The animal does not exist (`not_found`).',
  409: 'A request with the same Idempotency-Key is still in flight (`idempotency_key_in_flight`).',
  410: 'The operation has passed its sunset date (`gone`).',
  413: 'The request body is larger than 16 KiB (`payload_too_large`).',
  415: 'The request body is not application/json (`unsupported_media_type`).',
  422: 'The Idempotency-Key was used with a different body (`idempotency_key_reused`).',
  429: 'Rate limit exceeded (`rate_limit_exceeded`, `api_key_temporarily_banned`); see Retry-After.',
  500: 'Unexpected error (`internal_error`).',
  503: 'The database is unreachable (`service_unavailable`); see Retry-After.',
};

/** Documents the Error responses an operation can return. */
export function ApiErrorResponses(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, description: DESCRIPTIONS[status], type: ErrorDto })),
  );
}
