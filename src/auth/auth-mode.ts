import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

/** Metadata key of a route's declared authentication (set by @Public() or @ApiKeyAuth()). */
export const AUTH_MODE = 'animal-store:auth-mode';

/** `public`: no credentials; `api-key`: a valid bearer API key. */
export type AuthMode = 'public' | 'api-key';

/** The auth a handler declares, on the method or its controller (the method wins). */
export function declaredAuthMode(
  reflector: Reflector,
  handler: ReturnType<ExecutionContext['getHandler']>,
  controller: ReturnType<ExecutionContext['getClass']>,
): AuthMode | undefined {
  return reflector.getAllAndOverride<AuthMode | undefined>(AUTH_MODE, [handler, controller]);
}
