import type { HttpAdapterHost } from '@nestjs/core';
import type { Application, RequestHandler } from 'express';

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
