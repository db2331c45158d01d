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
  let modes = declared.get(handler);
  if (modes === undefined) declared.set(handler, (modes = new Map()));
  if (modes.has(controller)) return modes.get(controller);
  const mode = reflector.getAllAndOverride<AuthMode | undefined>(AUTH_MODE, [handler, controller]);
  modes.set(controller, mode);
  return mode;
}

/**
 * Decorator metadata is fixed once the classes are defined, and the global guards ask for it on
 * every request: it is read once per handler and controller (reflect-metadata walks the
 * prototype chain on each call).
 */
const declared = new WeakMap<object, Map<object, AuthMode | undefined>>();
