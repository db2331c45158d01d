import { ExecutionContext, Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Application, NextFunction, Request, Response } from 'express';
import { RateLimitGuard } from './rate-limit.guard.js';

/**
 * Guards only run for requests that match a route, yet every /v1 response must carry the
 * rate-limit headers, 404 route_not_found and 405 method_not_allowed included. This Express
 * layer is added behind all the routes and in front of Nest's not-found handler (Nest calls
 * onModuleInit after registering the routes and before that handler), so it sees exactly the
 * /v1 requests no route answered, and counts them as the guard would.
 *
 * (Not a Nest middleware: Nest registers those as `app.all()` routes, which would make every
 * method look allowed to the 404/405 route table.)
 */
@Injectable()
export class UnmatchedRouteRateLimiter implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly guard: RateLimitGuard,
  ) {}

  onModuleInit(): void {
    const app = this.adapterHost.httpAdapter?.getInstance<Application>();
    if (typeof app?.use !== 'function') return;
    app.use('/v1', (req: Request, res: Response, next: NextFunction) => {
      let pending: Promise<void> | undefined;
      try {
        pending = this.guard.limit(httpContext(req, res, next));
      } catch (err) {
        return next(err);
      }
      if (pending) pending.then(() => next(), next);
      else next();
    });
  }
}

/** The HTTP part of an ExecutionContext, for the throttlers' limit functions. */
function httpContext(req: Request, res: Response, next: NextFunction): ExecutionContext {
  const args = [req, res, next];
  const unavailable = (): never => {
    throw new Error('not an RPC or WebSocket context');
  };
  return {
    getType: () => 'http',
    getArgs: () => args,
    getArgByIndex: (i: number) => args[i],
    getClass: () => UnmatchedRouteRateLimiter,
    getHandler: () => UnmatchedRouteRateLimiter.prototype.onModuleInit,
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res, getNext: () => next }),
    switchToRpc: unavailable,
    switchToWs: unavailable,
  } as unknown as ExecutionContext;
}
