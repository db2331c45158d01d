import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { insufficientScopeChallenge } from '../auth/api-key-auth.decorator.js';
import { declaredAuthMode, declaredKeyRoute, type KeyRoute } from '../auth/auth-mode.js';
import { ApiError } from '../errors/api-error.js';
import { putHeader } from '../library-internals/index.js';
import { RATE_LIMIT_HEADER_NAMES } from '../rate-limit/rate-limit.windows.js';
import { Admission, AdmissionService } from './admission.service.js';

/**
 * The global guard of every /v1 operation, deny by default: a route needs a valid bearer API key
 * within its rate limits unless it is marked @Public(). (A route marked neither still needs a
 * key, and the route test in test/admission/auth.e2e-spec.ts fails for it, since its documentation would
 * lack the 401.) The rate-limit headers are on the response before any refusal is thrown, and
 * the exception filter keeps them.
 *
 * A route may need a scope (@ApiKeyAuth({ scope })): a valid key without it gets 403
 * insufficient_scope, decided from the key's cached lookup (no I/O), before any pipe,
 * interceptor or handler reads the body or records an Idempotency-Key. The request is counted
 * against the key like any other of its requests: the key was valid, and a client retrying a
 * refused operation is limited like any other.
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly admission: AdmissionService,
  ) {}

  /** A boolean at once when admission needed no I/O (AdmissionService.admit), which Nest takes without awaiting. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const handler = context.getHandler();
    const controller = context.getClass();
    if (declaredAuthMode(this.reflector, handler, controller) === 'public') return true;
    const route = declaredKeyRoute(this.reflector, handler, controller);
    const http = context.switchToHttp();
    const res = http.getResponse<Response>();
    const admission = this.admission.admit(http.getRequest<Request>(), {
      counted: route.counted,
      operation: route.operation,
    });
    return admission instanceof Promise
      ? admission.then((a) => admitted(res, a, route.scope))
      : admitted(res, admission, route.scope);
  }
}

/** Applies the admission to the response, and refuses a valid key without the route's scope. */
function admitted(res: Response, admission: Admission, scope: KeyRoute['scope']): true {
  applyAdmission(res, admission);
  if (scope !== undefined && !(admission.principal?.scopes.includes(scope) ?? false)) {
    throw new ApiError('insufficient_scope', `This API key lacks the scope ${scope} this operation needs.`, {
      headers: { 'WWW-Authenticate': insufficientScopeChallenge(scope) },
    });
  }
  return true;
}

/**
 * The rate-limit headers, lowercased once: every /v1 response carries them, so they are put
 * straight into the response's headers (bench scenario listPets). Their values are numbers and
 * window names from the code (rateLimitHeaders), valid header values.
 */
const RATE_LIMIT_HEADERS = RATE_LIMIT_HEADER_NAMES.map((name) => [name.toLowerCase(), name] as const);

/**
 * Sets the admission's headers on the response and throws its refusal, if any. With
 * `requireKey: false` (a /v1 path no route answers) a missing or invalid key is no refusal:
 * the request is counted, and limits and an unavailable database still refuse it.
 */
export function applyAdmission(res: Response, admission: Admission, { requireKey = true } = {}): void {
  const headers = admission.headers;
  if (headers !== undefined)
    for (let i = 0; i < RATE_LIMIT_HEADERS.length; i++) {
      const [lower, name] = RATE_LIMIT_HEADERS[i];
      putHeader(res, lower, name, headers[name]);
    }
  const refusal = admission.refusal;
  if (refusal === undefined) return;
  if (!requireKey && refusal instanceof ApiError && refusal.status === 401) return;
  throw refusal;
}
