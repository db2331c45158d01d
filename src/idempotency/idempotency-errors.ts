import { ApiError } from '../errors/api-error.js';

/** A 409 in flight suggests retrying after this many seconds. */
const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/** 422: the key holds a request with another body. */
export function reusedKey(): ApiError {
  return new ApiError(
    'idempotency_key_reused',
    'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
  );
}

/** 409: the key's first request is still running (or its claim was taken over by a retry). */
export function inFlight(): ApiError {
  return new ApiError(
    'idempotency_key_in_flight',
    'A request with this Idempotency-Key is still being processed; retry after it has finished.',
    { headers: { 'Retry-After': String(IN_FLIGHT_RETRY_AFTER_SECONDS) } },
  );
}
