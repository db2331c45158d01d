import { createHash } from 'node:crypto';
import { ApiError } from '../common/api-error.js';
import { InexactNumber } from '../common/json-codec.js';

/** The request header (contract, "Requests"). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The response header of a replayed response. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Visible ASCII, no spaces: a UUID, a ULID or any token a client generates fits. */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * The Idempotency-Key of a request: undefined when the header is absent, else a key of 1 to
 * 255 visible ASCII characters (400 invalid_parameter otherwise). Node joins a repeated header
 * with ", ", which the pattern refuses: two keys are not one.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header === 'string' && KEY_PATTERN.test(header)) return header;
  const message = `${IDEMPOTENCY_KEY_HEADER} must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters (no spaces), such as a UUID.`;
  throw new ApiError(400, 'invalid_parameter', message, [{ field: IDEMPOTENCY_KEY_HEADER, message }]);
}

/**
 * Nesting beyond this cannot be a valid body of any operation; refusing it keeps the canonical
 * form's recursion shallow whatever the body parser accepted.
 */
const MAX_DEPTH = 32;

/**
 * A canonical text of a parsed (lossless) JSON value: object keys sorted, numbers in their
 * exact form (int64 as digits), strings JSON-escaped. Two bodies that mean the same JSON
 * (key order, white space, `1.0` for `1`) have the same canonical text.
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_DEPTH) {
    throw new ApiError(400, 'validation_failed', 'The request body is nested too deeply.');
  }
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : JSON.stringify(String(value));
    case 'bigint':
      return value.toString();
    case 'string':
      return JSON.stringify(value);
  }
  if (value instanceof InexactNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], depth + 1)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(String(value));
}

/**
 * What makes two requests "the same request" for an Idempotency-Key: hex SHA-256 of the
 * operation (method and route) and the canonical JSON body.
 */
export function requestFingerprint(operation: string, body: unknown): string {
  return createHash('sha256').update(operation).update('\n').update(canonicalJson(body)).digest('hex');
}
