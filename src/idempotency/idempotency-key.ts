import { createHash } from 'node:crypto';
import { parseItem } from 'structured-headers';
import { ApiError } from '../errors/api-error.js';
import { canonicalJson, JsonTooDeepError, MAX_JSON_DEPTH } from '../json/json-codec.js';

/** The request header (docs/api.md, "Idempotent retries"). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The response header of a replayed response. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Visible ASCII, no spaces: a UUID, a ULID or any token a client generates fits. */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/**
 * Longest header worth parsing: a key of 255 characters, every one escaped, in quotes, with
 * room for Structured Field parameters. Anything longer is refused before it is parsed.
 */
const MAX_HEADER_LENGTH = 1024;

const KEY_RULE = `1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters (no spaces), such as a UUID`;

function invalidKey(message: string): ApiError {
  return new ApiError('invalid_parameter', message, { details: [{ field: IDEMPOTENCY_KEY_HEADER, message }] });
}

/**
 * The Idempotency-Key of a request: undefined when the header is absent, else the key, which
 * is 1 to 255 visible ASCII characters (400 invalid_parameter otherwise). Two spellings mean
 * the same key:
 *
 * - the IETF draft's (draft-ietf-httpapi-idempotency-key-header-07): a Structured Field
 *   string, `"8e03…"`, with `\"` and `\\` escaped (RFC 8941 sf-string), preferred;
 * - the bare key, `8e03…`, for clients that do not quote it.
 *
 * A header that starts with a double quote is the quoted form and must be a well-formed
 * sf-string (parsed by structured-headers; Structured Field parameters after it are ignored,
 * as RFC 8941 asks of unknown parameters). Node joins a repeated header with ", ", which
 * neither form accepts: two keys are not one.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string') throw invalidKey(`${IDEMPOTENCY_KEY_HEADER} must be sent once.`);
  if (header.length > MAX_HEADER_LENGTH) throw invalidKey(`${IDEMPOTENCY_KEY_HEADER} must be ${KEY_RULE}.`);
  if (header.startsWith('"')) {
    let value: unknown;
    try {
      [value] = parseItem(header);
    } catch {
      value = undefined;
    }
    if (typeof value !== 'string') {
      throw invalidKey(
        `${IDEMPOTENCY_KEY_HEADER} starts with a double quote but is not one Structured Field string: printable ASCII between double quotes, with \\" and \\\\ as the only escapes.`,
      );
    }
    if (!KEY_PATTERN.test(value)) throw invalidKey(`The quoted ${IDEMPOTENCY_KEY_HEADER} must hold ${KEY_RULE}.`);
    return value;
  }
  if (KEY_PATTERN.test(header)) return header;
  throw invalidKey(`${IDEMPOTENCY_KEY_HEADER} must be ${KEY_RULE}, preferably as a quoted string ("…").`);
}

/**
 * The canonical text of a parsed (lossless) JSON body, as fingerprinted: object keys sorted,
 * numbers in their exact form (int64 as digits), strings JSON-escaped (json/json-codec.ts).
 * Two bodies that mean the same JSON (key order, white space, `1.0` for `1`) have the same
 * canonical text.
 */
export function canonicalBody(body: unknown): string {
  try {
    return canonicalJson(body, MAX_JSON_DEPTH);
  } catch (err) {
    if (err instanceof JsonTooDeepError)
      throw new ApiError('validation_failed', 'The request body is nested too deeply.');
    throw err;
  }
}

/**
 * What makes two requests "the same request" for an Idempotency-Key: hex SHA-256 of the
 * operation (method and route) and the canonical JSON body.
 */
export function requestFingerprint(operation: string, body: unknown): string {
  return createHash('sha256').update(operation).update('\n').update(canonicalBody(body)).digest('hex');
}
