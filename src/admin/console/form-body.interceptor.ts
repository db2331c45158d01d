import { CallHandler, ExecutionContext, Injectable, NestInterceptor, UseInterceptors } from '@nestjs/common';
import * as contentType from 'content-type';
import type { Request } from 'express';
import getRawBody from 'raw-body';
import { Observable } from 'rxjs';
import { ApiError } from '../../errors/api-error.js';

/** Largest form the console accepts: its forms hold a name, a plan, limits, an expiry and scopes. */
export const MAX_FORM_BYTES = 8 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a console form (application/x-www-form-urlencoded, UTF-8, at most MAX_FORM_BYTES) into
 * req.body as URLSearchParams. It runs after the guards, so a request without a session or from
 * another site is refused before its body is read; the admin API's routes never parse forms.
 * Anything else is refused with the Error body: 415 for another type or a coding, 413 past the size.
 */
@Injectable()
export class FormBodyInterceptor implements NestInterceptor {
  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = context.switchToHttp().getRequest<Request & { body?: unknown }>();
    req.body = await readForm(req);
    return next.handle();
  }
}

/** Marks a console route that takes a form. */
export const FormBody = (): MethodDecorator => UseInterceptors(FormBodyInterceptor);

async function readForm(req: Request): Promise<URLSearchParams> {
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
    return new URLSearchParams();
  }
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    throw new ApiError('unsupported_media_type', 'Content-Encoding is not supported: send the form uncompressed.');
  }
  let type: string;
  let charset: string;
  try {
    const parsed = contentType.parse(req.headers['content-type'] ?? '');
    type = parsed.type;
    charset = (parsed.parameters.charset ?? 'utf-8').toLowerCase();
  } catch {
    type = '';
    charset = '';
  }
  if (type !== 'application/x-www-form-urlencoded' || (charset !== 'utf-8' && charset !== 'utf8')) {
    throw new ApiError(
      'unsupported_media_type',
      'The console takes its forms as application/x-www-form-urlencoded (UTF-8).',
    );
  }
  let raw: Buffer;
  try {
    raw = await getRawBody(req, { limit: MAX_FORM_BYTES, length });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') {
      throw new ApiError('payload_too_large', `A console form must be at most ${MAX_FORM_BYTES} bytes.`);
    }
    throw new ApiError('validation_failed', 'The form could not be read completely.');
  }
  try {
    return new URLSearchParams(utf8.decode(raw));
  } catch {
    throw new ApiError('validation_failed', 'The form is not valid UTF-8.');
  }
}
