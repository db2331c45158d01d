import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors/api-error.js';

/**
 * The limits the edge applies to a request's head before any route, guard or parser sees it
 * (docs/security.md, "Input limits"). Node's HTTP server would apply some of these by itself,
 * silently: it keeps only the first 2,000 header fields (maxHeadersCount), drops a second
 * Authorization or Host, and reads `Transfer-Encoding: gzip, chunked` as plain chunked. The
 * server is configured to keep everything (applyHttpEdge), and these checks refuse instead.
 */

/** Most header fields a request may have, else 431: ample for browsers and proxies. */
export const MAX_HEADER_FIELDS = 100;

/**
 * Headers that must appear at most once: Node keeps the first of each and drops the others, so
 * a second one would be read by a proxy and ignored here, or the reverse. (A second
 * Idempotency-Key is joined to the first by Node, and refused as a malformed key.)
 */
const SINGLE_HEADERS = ['host', 'authorization', 'content-type', 'content-length'];
/** Their lengths, so that most header names are passed over without being lower-cased. */
const SINGLE_LENGTHS = new Set(SINGLE_HEADERS.map((name) => name.length));

/**
 * The refusal a request's head earns, or undefined: one pass over its raw header names.
 *
 * - more than MAX_HEADER_FIELDS header fields: 431 `headers_too_large`;
 * - an HTTP/1.1 request without Host (RFC 9112 §3.2), or a header of SINGLE_HEADERS given
 *   twice: 400 `validation_failed`;
 * - a transfer coding other than `chunked` alone: 400 `validation_failed` when the body's length
 *   cannot be known, else 501 `not_implemented` (transferCodingRefusal).
 */
export function headRefusal(req: IncomingMessage): ApiError | undefined {
  const raw = req.rawHeaders;
  if (raw.length > 2 * MAX_HEADER_FIELDS) {
    return new ApiError('headers_too_large', `The request has more than ${MAX_HEADER_FIELDS} header fields.`);
  }
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (!SINGLE_LENGTHS.has(raw[i].length)) continue;
    const index = SINGLE_HEADERS.indexOf(raw[i].toLowerCase());
    if (index < 0) continue;
    if ((seen & (1 << index)) !== 0) {
      return new ApiError('validation_failed', `The ${SINGLE_HEADERS[index]} header must be given once.`, {
        details: [{ field: SINGLE_HEADERS[index], message: 'given more than once' }],
      });
    }
    seen |= 1 << index;
  }
  if ((seen & 1) === 0 && req.httpVersion === '1.1') {
    return new ApiError('validation_failed', 'An HTTP/1.1 request must have a Host header.', {
      details: [{ field: 'host', message: 'missing' }],
    });
  }
  const coding = req.headers['transfer-encoding'];
  return coding === undefined ? undefined : transferCodingRefusal(coding);
}

/**
 * `chunked` alone is the one transfer coding. Without `chunked` last, or with it twice, the
 * body's length cannot be known (RFC 9112 §6.3): 400. Another coding before it (`gzip,
 * chunked`) is one the service does not apply (RFC 9112 §6.1): 501.
 */
function transferCodingRefusal(value: string): ApiError | undefined {
  const codings = value.toLowerCase().split(',');
  const last = codings.length - 1;
  if (last === 0 && codings[0].trim() === 'chunked') return undefined;
  if (codings[last].trim() !== 'chunked' || codings.some((c, i) => i < last && c.trim() === 'chunked')) {
    return new ApiError('validation_failed', 'Transfer-Encoding must end with chunked, once.');
  }
  return new ApiError('not_implemented', 'Transfer-Encoding: only chunked is supported.');
}

/**
 * The request target with every `%` escaped as `%25` when its path is not valid percent-encoded
 * UTF-8 (`/v1/pets/%`, `%zz`, `%c0%ae`), else the target itself. Express would answer such a
 * path with its own 400 from inside the router, before the guards; escaped, it is matched
 * literally, so its request is admitted (authenticated, counted, its headers set) like any
 * other and then refused by the route's own rules (a `petId` of `%` is a 400
 * `invalid_parameter`; a path no route has is a 404).
 */
export function literalTarget(url: string): string {
  const percent = url.indexOf('%');
  if (percent < 0) return url;
  const queryAt = url.indexOf('?');
  if (queryAt >= 0 && queryAt < percent) return url;
  const path = queryAt < 0 ? url : url.slice(0, queryAt);
  try {
    decodeURIComponent(path);
    return url;
  } catch {
    return path.replaceAll('%', '%25') + (queryAt < 0 ? '' : url.slice(queryAt));
  }
}
