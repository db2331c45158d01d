import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
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

/** Metadata key of an operation's body options (set by @JsonBody()). */
const JSON_BODY_OPTIONS = 'animal-store:json-body';

export interface JsonBodyOptions {
  /** Largest body accepted, in bytes (413 beyond it); MAX_BODY_BYTES unless the operation states its own. */
  maxBytes?: number;
  /** true: the handler gets the raw bytes (a Buffer) of a body typed UTF-8 JSON, unparsed, for a signature over them. */
  raw?: boolean;
}

/**
 * Reads and parses JSON request bodies. It runs as an interceptor, after the guards, so an
 * unauthenticated or rate-limited caller is refused before its body is read, and every
 * answer, 400/413/415 included, has passed through authentication and the rate limiter.
 * Nest's own body parser is switched off (it would parse numbers lossily and answer in its
 * own error format).
 */
@Injectable()
export class JsonBodyInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { body?: unknown }>();
    if (BODY_METHODS.has(req.method)) {
      const options = this.reflector.get<JsonBodyOptions | undefined>(JSON_BODY_OPTIONS, context.getHandler()) ?? {};
      const res = http.getResponse<Response>();
      const maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
      req.body = options.raw ? await readBodyBytes(req, res, maxBytes) : await readJsonBody(req, res, maxBytes);
    }
    return next.handle();
  }
}

/**
 * Marks an operation that takes a JSON body: it is read by JsonBodyInterceptor, after the
 * guards. Only these operations pay for an interceptor; the reads (the hot path) have none.
 * Put it closest to the method, below any interceptor that needs the parsed body (Nest runs
 * method interceptors in the order their decorators are applied, bottom up).
 */
export const JsonBody = (options: JsonBodyOptions = {}): MethodDecorator =>
  applyDecorators(SetMetadata(JSON_BODY_OPTIONS, options), UseInterceptors(JsonBodyInterceptor));

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads the body of a request that has passed admission and parses it as JSON (readBodyBytes,
 * then parseJsonBytes); undefined when there is none.
 */
export async function readJsonBody(req: Request, res: Response, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const raw = await readBodyBytes(req, res, maxBytes);
  return raw === undefined ? undefined : parseJsonBytes(raw);
}

/**
 * The bytes of the body of a request that has passed admission, at most `maxBytes`, or
 * undefined when there is none. A `Content-Encoding` other than
 * `identity` is a 415 (RFC 9110 §8.4: the service applies no coding, so it cannot read the
 * body as JSON), and so is a type other than UTF-8 JSON. A client waiting on `Expect: 100-continue` is invited to send the body only
 * here, once the request is admitted and its head accepted (applyHttpEdge keeps Node from
 * answering 100 at once).
 */
export async function readBodyBytes(
  req: Request,
  res: Response,
  maxBytes = MAX_BODY_BYTES,
): Promise<Buffer | undefined> {
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
    raw = await getRawBody(req, { limit: maxBytes, length: req.headers['content-length'] });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw new ApiError('payload_too_large', `The request body must be at most ${maxBytes} bytes.`);
    }
    throw new ApiError('malformed_json', 'The request body could not be read completely.');
  }
  return raw;
}

/** A body's bytes as JSON: 400 when they are not UTF-8 or not JSON, or nest too deeply. */
export function parseJsonBytes(raw: Buffer): unknown {
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
