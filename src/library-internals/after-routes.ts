import type { ExecutionContext, Type } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import type { Application, NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Internal: the order in which NestApplication.init sets up Express (checked against
 * @nestjs/core 12.5.1 and express 5.3.0): it registers the routes, then calls the
 * onModuleInit hooks, then mounts its not-found handler and exception handler. An Express
 * layer added from onModuleInit therefore sits behind every route and in front of the
 * not-found handler: it sees exactly the requests no route answered. Canary: after-routes.spec.ts.
 *
 * Call from onModuleInit. Returns false when the HTTP adapter is not Express (or there is no
 * HTTP adapter, as in a standalone application context). `path` is matched in any case of its
 * letters: routing is case-sensitive, so /V1/pets reaches no route, and is one of the requests
 * this layer must see.
 *
 * (A Nest middleware would not do: Nest registers those as `app.all()` routes, ahead of the
 * routes, and they would make every method look allowed to the route table.)
 */
export function useBehindRoutes(adapterHost: HttpAdapterHost, path: string, handler: RequestHandler): boolean {
  const app = adapterHost.httpAdapter?.getInstance<Application>();
  if (typeof app?.use !== 'function') return false;
  // The path and what is below it, as Express mounts a string path, but in any case.
  const escaped = path.replace(/\/+$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  app.use(new RegExp(`^${escaped}(?=/|$)`, 'i'), handler);
  return true;
}

/**
 * Internal: the shape of Nest's ExecutionContext (ExecutionContextHost in @nestjs/core 12.5.1),
 * built by hand for a request that reached no route, so code written for guards (the
 * throttlers' limit functions) can run on it. Nest builds a context only for a matched route,
 * and its ExecutionContextHost is not part of the public API. `getClass` and `getHandler`
 * answer the given class and method, as they would for a route of that class. Canary:
 * after-routes.spec.ts compares it with the context Nest gives a guard.
 */
export function httpExecutionContext(
  req: Request,
  res: Response,
  next: NextFunction,
  cls: Type<unknown>,
  handler: (...args: never[]) => unknown,
): ExecutionContext {
  const args = [req, res, next];
  const unavailable = (): never => {
    throw new Error('not an RPC or WebSocket context');
  };
  const context = {
    getType: () => 'http',
    getArgs: () => args,
    getArgByIndex: (i: number) => args[i],
    getClass: () => cls,
    getHandler: () => handler,
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res, getNext: () => next }),
    switchToRpc: unavailable,
    switchToWs: unavailable,
  };
  // The generic getters (getRequest<T>(), getType<T>()) cannot be typed by an object literal.
  return context as unknown as ExecutionContext;
}
