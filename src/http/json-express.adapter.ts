import { StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express, { type Response } from 'express';
import { parse as parseQueryString } from 'node:querystring';
import { stringifyJson } from '../json/json-codec.js';
import { putHeader } from '../library-internals/index.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Nest's Express adapter, answering handler results as JSON written by the service's own
 * writer: int64 values (bigint) as exact numbers, where Express's res.json would throw on a
 * bigint. `reply()` is the adapter's public extension point for this (Nest calls it with each
 * handler's result).
 *
 * A plain value is written in one step (status, type, length, end): Express's res.send does
 * the same after work this API never needs (type sniffing, charset rewriting, ETag and
 * freshness checks: ETags are off), on the hot path of every read (bench scenario listPets).
 * Strings (an idempotent replay, already serialised), Buffers, streams and empty results keep
 * Express's own path.
 */
export class JsonExpressAdapter extends ExpressAdapter {
  constructor() {
    const app = express();
    // Paths are matched exactly: /V1/pets is no route (404), where Express would serve /v1/pets
    // by default. Set before the adapter's first use of the app creates its router.
    app.set('case sensitive routing', true);
    // Every pair of the query string is read: Express's default parser keeps the first 1,000
    // and drops the rest silently, which would hide a repeated or unknown parameter from the
    // operations' checks. The string is bounded by the 16 KiB of headers.
    app.set('query parser', parseEveryPair);
    super(app);
  }

  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (!isJsonData(body)) return super.reply(response, body, statusCode);
    if (statusCode !== undefined) response.statusCode = statusCode;
    const text = stringifyJson(body);
    // Put straight into the response's headers, as on every response (library-internals).
    putHeader(response, 'content-type', 'Content-Type', JSON_TYPE);
    putHeader(response, 'content-length', 'Content-Length', Buffer.byteLength(text));
    response.end(text);
    return response;
  }
}

/** The query string's pairs, all of them (maxKeys 0: no limit); a repeated name gives an array. */
export function parseEveryPair(query: string): Record<string, string | string[] | undefined> {
  return parseQueryString(query, '&', '=', { maxKeys: 0 });
}

/** An object or array for the JSON writer; not text, bytes, a file or a stream. */
function isJsonData(body: unknown): body is object {
  return (
    typeof body === 'object' &&
    body !== null &&
    !Buffer.isBuffer(body) &&
    !(body instanceof StreamableFile) &&
    typeof (body as { pipe?: unknown }).pipe !== 'function'
  );
}
