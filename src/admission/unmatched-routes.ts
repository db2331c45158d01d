import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { useBehindRoutes } from '../library-internals/index.js';
import { applyAdmission } from './admission.guard.js';
import { AdmissionService } from './admission.service.js';

/**
 * Guards only run for requests that match a route, yet every /v1 response must carry the
 * rate-limit headers, 404 route_not_found and 405 method_not_allowed included. This Express
 * layer is added behind all the routes and in front of Nest's not-found handler (see
 * library-internals/after-routes.ts), so it sees exactly the /v1 requests no route answered, and
 * counts them as the guard would: a 429, or the 503 of a key that could not be checked, answers
 * instead of the 404 or 405; a missing or invalid key does not (the route does not exist).
 */
@Injectable()
export class UnmatchedRouteAdmission implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly admission: AdmissionService,
  ) {}

  onModuleInit(): void {
    useBehindRoutes(this.adapterHost, '/v1', (req: Request, res: Response, next: NextFunction) => {
      Promise.resolve()
        .then(() => this.admission.admit(req))
        .then((admission) => {
          applyAdmission(res, admission, { requireKey: false });
          next();
        })
        .catch(next);
    });
  }
}
