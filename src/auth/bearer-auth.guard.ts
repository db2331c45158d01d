import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { declaredAuthMode } from './auth-mode.js';
import { AuthService } from './auth.service.js';
import type { AuthResult } from './auth.types.js';

/**
 * The global authentication guard, deny by default: every route needs a valid bearer API key
 * unless it is marked @Public(). (A route marked neither still needs a key, and the route
 * test in test/auth.e2e-spec.ts fails for it, since its documentation would lack the 401.)
 * Runs after the rate-limit guard, which keys its counters on the same memoised resolve().
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (declaredAuthMode(this.reflector, context.getHandler(), context.getClass()) === 'public') return true;
    const result = this.auth.resolve(context.switchToHttp().getRequest<Request>());
    return result instanceof Promise ? result.then(admit) : admit(result);
  }
}

/** Lets an authenticated request through; refuses the others with their 401. */
function admit(result: AuthResult): boolean {
  if (!result.ok) throw result.error;
  return true;
}
