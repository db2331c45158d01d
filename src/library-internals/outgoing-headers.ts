import { OutgoingMessage, validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';

/**
 * Internal: how node:http keeps a response's headers until its head is written (checked against
 * Node 20.20.2 and 24.21.0): an own property of each OutgoingMessage under the symbol
 * `kOutHeaders`, null or a null-prototype object from each lowercased name to `[name as given,
 * value]`. `setHeader` validates the name and the value, lowercases the name and stores that
 * pair; getHeader, hasHeader, getHeaders, removeHeader and the writing of the head read it.
 * Canary: outgoing-headers.spec.ts.
 *
 * A header the service sets on every response is stored here directly, its lowercased name and
 * value prepared or checked beforehand, which spares setHeader's two checks and its new
 * lowercase string per header (bench scenario listPets).
 */
const OUT_HEADERS: symbol | undefined = Object.getOwnPropertySymbols(new OutgoingMessage()).find(
  (s) => s.description === 'kOutHeaders',
);

export type HeaderValue = string | number | readonly string[];
/** A header for putHeaders: its name lowercased, its name as written, and its value. */
export type PreparedHeader = readonly [lower: string, name: string, value: HeaderValue];

/** A constant header checked once as setHeader checks it (throws as setHeader would). */
export function prepareHeader(name: string, value: HeaderValue): PreparedHeader {
  validateHeaderName(name);
  // As setHeader does for any value (Node types it for strings only).
  validateHeaderValue(name, value as string);
  return [name.toLowerCase(), name, value];
}

/**
 * Sets a header as `res.setHeader(name, value)` does, for a value the caller has made valid (no
 * CR, LF or other control character) and `lower` equal to `name.toLowerCase()`. Once the head is
 * written, or where the internal is not as described, it is setHeader itself.
 */
export function putHeader(res: ServerResponse, lower: string, name: string, value: HeaderValue): void {
  let headers = outHeaders(res);
  if (headers === undefined) {
    res.setHeader(name, value);
    return;
  }
  if (headers === null) (res as unknown as Holder)[OUT_HEADERS as symbol] = headers = Object.create(null) as OutHeaders;
  headers[lower] = [name, value];
}

type OutHeaders = Record<string, [string, HeaderValue]>;
type Holder = Record<symbol, OutHeaders | null | undefined>;

/**
 * The response's header store while it may still be written: null while empty; undefined once
 * the head is written, or when the store is not where it is expected (then setHeader and
 * removeHeader do the work, and refuse what they refuse).
 */
function outHeaders(res: ServerResponse): OutHeaders | null | undefined {
  return OUT_HEADERS === undefined || res.headersSent ? undefined : (res as unknown as Holder)[OUT_HEADERS];
}

/** Removes a header as `res.removeHeader(name)` does, `lower` being `name.toLowerCase()`. */
export function dropHeader(res: ServerResponse, lower: string, name: string): void {
  const headers = outHeaders(res);
  if (headers === undefined) res.removeHeader(name);
  else if (headers !== null) delete headers[lower];
}

/** Sets prepared headers (prepareHeader) on a response. */
export function putHeaders(res: ServerResponse, headers: readonly PreparedHeader[]): void {
  for (let i = 0; i < headers.length; i++) putHeader(res, headers[i][0], headers[i][1], headers[i][2]);
}

/** Whether headers go through the internal (false: every putHeader is a setHeader). */
export const directHeaders = OUT_HEADERS !== undefined;
