import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { declaredAuthMode } from '../auth/auth-mode.js';
import { ApiError } from '../errors/api-error.js';
import { Admission, AdmissionService } from './admission.service.js';

/**
 * The global guard of every /v1 operation, deny by default: a route needs a valid bearer API key
 * within its rate limits unless it is marked @Public(). (A route marked neither still needs a
 * key, and the route test in test/auth.e2e-spec.ts fails for it, since its documentation would
 * lack the 401.) The rate-limit headers are on the response before any refusal is thrown, and
 * the exception filter keeps them.
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly admission: AdmissionService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (declaredAuthMode(this.reflector, context.getHandler(), context.getClass()) === 'public') return true;
    const admission = await this.admission.admit(context);
    applyAdmission(context.switchToHttp().getResponse<Response>(), admission);
    return true;
  }
}

/**
 * Sets the admission's headers on the response and throws its refusal, if any. With
 * `requireKey: false` (a /v1 path no route answers) a missing or invalid key is no refusal:
 * the request is counted, and limits and an unavailable database still refuse it.
 */
export function applyAdmission(res: Response, admission: Admission, { requireKey = true } = {}): void {
  for (const [name, value] of Object.entries(admission.headers ?? {})) res.setHeader(name, value);
  const refusal = admission.refusal;
  if (refusal === undefined) return;
  if (!requireKey && refusal instanceof ApiError && refusal.status === 401) return;
  throw refusal;
}
