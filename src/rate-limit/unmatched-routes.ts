import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { httpExecutionContext, useBehindRoutes } from '../framework/index.js';
import { RateLimitGuard } from './rate-limit.guard.js';

/**
 * Guards only run for requests that match a route, yet every /v1 response must carry the
 * rate-limit headers, 404 route_not_found and 405 method_not_allowed included. This Express
 * layer is added behind all the routes and in front of Nest's not-found handler (see
 * framework/after-routes.ts), so it sees exactly the /v1 requests no route answered, and
 * counts them as the guard would.
 */
@Injectable()
export class UnmatchedRouteRateLimiter implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly guard: RateLimitGuard,
  ) {}

  onModuleInit(): void {
    useBehindRoutes(this.adapterHost, '/v1', (req: Request, res: Response, next: NextFunction) => {
      let pending: Promise<void> | undefined;
      try {
        const context = httpExecutionContext(req, res, next, UnmatchedRouteRateLimiter, UnmatchedRouteRateLimiter.prototype.onModuleInit);
        pending = this.guard.limit(context);
      } catch (err) {
        return next(err);
      }
      if (pending) pending.then(() => next(), next);
      else next();
    });
  }
}
