import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { Scope } from '../api-keys/scopes.js';
import type { KeyOperation } from '../api-keys/operations.js';

/** Metadata key of a route's declared authentication (set by @Public() or @ApiKeyAuth()). */
export const AUTH_MODE = 'animal-store:auth-mode';

/** `public`: no credentials; `api-key`: a valid bearer API key. */
export type AuthMode = 'public' | 'api-key';

/** Metadata key of what a route needing an API key asks of it (set by @ApiKeyAuth()). */
export const KEY_ROUTE = 'animal-store:key-route';

/**
 * What a route needing an API key asks of it: a scope, whether its requests are counted, and the
 * operation its usage is recorded under (`other` when it names none).
 */
export interface KeyRoute {
  scope?: Scope;
  counted: boolean;
  operation?: KeyOperation;
}

const ANY_KEY: KeyRoute = { counted: true };

/** What a handler needing a key asks of it, on the method or its controller (the method wins). */
export function declaredKeyRoute(
  reflector: Reflector,
  handler: ReturnType<ExecutionContext['getHandler']>,
  controller: ReturnType<ExecutionContext['getClass']>,
): KeyRoute {
  let routes = declaredRoutes.get(handler);
  if (routes === undefined) declaredRoutes.set(handler, (routes = new Map()));
  let route = routes.get(controller);
  if (route === undefined) {
    route = reflector.getAllAndOverride<KeyRoute | undefined>(KEY_ROUTE, [handler, controller]) ?? ANY_KEY;
    routes.set(controller, route);
  }
  return route;
}

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
const declaredRoutes = new WeakMap<object, Map<object, KeyRoute>>();
