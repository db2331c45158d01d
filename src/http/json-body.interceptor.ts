import { CallHandler, ExecutionContext, Injectable, NestInterceptor, UseInterceptors } from '@nestjs/common';
import * as contentType from 'content-type';
import type { Request, Response } from 'express';
import getRawBody from 'raw-body';
import { Observable } from 'rxjs';
import { ApiError } from '../errors/api-error.js';
import { JsonSyntaxError, JsonTooDeepError, MAX_JSON_DEPTH, parseJson } from '../json/json-codec.js';

/** Largest accepted request body: 16 KiB, else 413 (docs/api.md, "Requests"). */
export const MAX_BODY_BYTES = 16 * 1024;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads and parses JSON request bodies. It runs as an interceptor, after the guards, so an
 * unauthenticated or rate-limited caller is refused before its body is read, and every
 * answer, 400/413/415 included, has passed through authentication and the rate limiter.
 * Nest's own body parser is switched off (it would parse numbers lossily and answer in its
 * own error format).
 */
@Injectable()
export class JsonBodyInterceptor implements NestInterceptor {
  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { body?: unknown }>();
    if (BODY_METHODS.has(req.method)) req.body = await readJsonBody(req, http.getResponse<Response>());
    return next.handle();
  }
}

/**
 * Marks an operation that takes a JSON body: it is read by JsonBodyInterceptor, after the
 * guards. Only these operations pay for an interceptor; the reads (the hot path) have none.
 * Put it closest to the method, below any interceptor that needs the parsed body (Nest runs
 * method interceptors in the order their decorators are applied, bottom up).
 */
export const JsonBody = (): MethodDecorator => UseInterceptors(JsonBodyInterceptor);

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads the body of a request that has passed admission. A `Content-Encoding` other than
 * `identity` is a 415 (RFC 9110 §8.4: the service applies no coding, so it cannot read the
 * body as JSON). A client waiting on `Expect: 100-continue` is invited to send the body only
 * here, once the request is admitted and its head accepted (applyHttpEdge keeps Node from
 * answering 100 at once).
 */
export async function readJsonBody(req: Request, res: Response): Promise<unknown> {
  if (!hasBody(req)) return undefined;
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    throw new ApiError(
      'unsupported_media_type',
      'Content-Encoding is not supported: send the request body uncompressed.',
    );
  }
  let charset: string;
  try {
    const parsed = contentType.parse(req.headers['content-type'] ?? '');
    if (parsed.type !== 'application/json') throw new Error('not json');
    charset = (parsed.parameters.charset ?? 'utf-8').toLowerCase();
  } catch {
    throw new ApiError('unsupported_media_type', 'The request body must be application/json.');
  }
  if (charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError('unsupported_media_type', 'The request body must be UTF-8 encoded JSON.');
  }
  if (/^100-continue$/i.test(req.headers.expect ?? '') && !res.headersSent) res.writeContinue();
  let raw: Buffer;
  try {
    raw = await getRawBody(req, { limit: MAX_BODY_BYTES, length: req.headers['content-length'] });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw new ApiError('payload_too_large', `The request body must be at most ${MAX_BODY_BYTES} bytes.`);
    }
    throw new ApiError('malformed_json', 'The request body could not be read completely.');
  }
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw new ApiError('malformed_json', 'The request body is not valid UTF-8.');
  }
  try {
    return parseJson(text);
  } catch (err) {
    if (err instanceof JsonTooDeepError) {
      throw new ApiError(
        'validation_failed',
        `The request body is nested too deeply (at most ${MAX_JSON_DEPTH} levels).`,
      );
    }
    if (err instanceof JsonSyntaxError) {
      throw new ApiError('malformed_json', `The request body is not valid JSON: ${err.message}.`);
    }
    throw err;
  }
}
