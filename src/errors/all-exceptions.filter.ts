import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AppLogger } from '../logging/app-logger.js';
import { ApiError, ErrorBody, ErrorCode } from './api-error.js';
import { DB_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from './database-errors.js';
import { requestContext } from '../request-context/request-context.js';
import { allowedMethods, isRouterNotFound } from '../library-internals/index.js';
import { stringifyJson } from '../json/json-codec.js';
import { randomUUID } from 'node:crypto';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'validation_failed',
  401: 'invalid_api_key',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'idempotency_key_in_flight',
  410: 'gone',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'idempotency_key_reused',
  429: 'rate_limit_exceeded',
  503: 'service_unavailable',
};

/**
 * The one place that writes error responses: every failure, from routing to an unexpected
 * crash, leaves as the Error body `{code, message, status, requestId}` (docs/api.md, "Errors"),
 * `requestId` being the response's X-Request-Id. Framework
 * messages, stack traces and SQL never reach the client; unexpected errors are logged in full.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() private readonly appLogger?: AppLogger,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const error = this.toApiError(exception, req);
    if (res.headersSent) {
      // Too late for an error body: the best we can do is cut the connection.
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    if (error.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="animal-store"');
    // Headers describing a successful representation must not leak onto an error.
    res.removeHeader('Location');
    // The request edge gave the request its id; a request that did not pass through it (an app
    // without the edge) gets one here, so the body and the header always agree.
    let requestId = req.id;
    if (requestId === undefined) {
      requestId = req.id = randomUUID();
      res.setHeader('X-Request-Id', requestId);
    }
    const body: ErrorBody = error.toBody(requestId);
    res.status(error.status).type('application/json').send(stringifyJson(body));
  }

  private toApiError(exception: unknown, req: Request): ApiError {
    if (exception instanceof ApiError) return exception;
    if (isDatabaseUnavailable(exception)) {
      requestContext(req).databaseError = 'unavailable';
      this.log(req, 'warn', `database unavailable: ${describe(exception)}`);
      return new ApiError('service_unavailable', 'The service is temporarily unavailable; retry later.', {
        headers: { 'Retry-After': String(DB_RETRY_AFTER_SECONDS) },
      });
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === HttpStatus.NOT_FOUND && isRouterNotFound(exception)) {
        const allowed = allowedMethods(this.adapterHost.httpAdapter.getInstance(), req.path);
        if (allowed.length > 0) {
          return new ApiError('method_not_allowed', `Method ${req.method} is not allowed on ${req.path}.`, {
            headers: { Allow: allowed.join(', ') },
          });
        }
        return new ApiError('route_not_found', `No route matches ${req.method} ${req.path}.`);
      }
      if (status >= 500) {
        this.log(req, 'error', `unexpected ${status}: ${describe(exception)}`, exception);
        return internal();
      }
      const code = CODE_BY_STATUS[status] ?? (status >= 400 && status < 500 ? 'validation_failed' : 'internal_error');
      return new ApiError(code, statusMessage(exception));
    }
    if (isDatabaseError(exception)) requestContext(req).databaseError = 'query';
    this.log(req, 'error', `unhandled error on ${req.method} ${req.path}: ${describe(exception)}`, exception);
    return internal();
  }

  /**
   * Logs with the request's id, so the line can be found from the X-Request-Id the client got;
   * through Nest's logger when the app has no AppLogger (unit tests).
   */
  private log(req: Request, level: 'warn' | 'error', message: string, err?: unknown): void {
    if (this.appLogger) this.appLogger.request(req.id, level, 'Errors', message, err);
    else if (level === 'warn') this.logger.warn(message);
    else this.logger.error(message, (err as Error)?.stack);
  }
}

function internal(): ApiError {
  return new ApiError('internal_error', 'An unexpected error occurred.');
}

/** A short message for framework HttpExceptions that is safe to show. */
function statusMessage(e: HttpException): string {
  const response = e.getResponse();
  if (typeof response === 'object' && response && typeof (response as { message?: unknown }).message === 'string') {
    return (response as { message: string }).message;
  }
  return e.message;
}

/** Errors raised by Prisma or its driver adapters (counted in database_errors_total). */
function isDatabaseError(e: unknown): boolean {
  return e instanceof Error && /^(PrismaClient|DriverAdapter)/.test(e.name);
}

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
