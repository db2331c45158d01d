import { CanActivate, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error.js';
import { Clock } from '../time/clock.js';
import { Inject } from '@nestjs/common';
import { publicUrlsConfig, type PublicUrlsConfig } from '../config/public-urls.config.js';

/** getPet was deprecated when v1.0.0 of this service shipped (RFC 9745 structured date). */
export const GET_PET_DEPRECATED_AT = new Date('2026-11-22T00:00:00Z');
/** getPet is removed on 5 December 2030 (interface, "Get an animal"). */
export const GET_PET_SUNSET = new Date('2030-12-05T00:00:00Z');

/**
 * Adds Deprecation, Sunset and the successor Link to every response of getPet, errors
 * included; a middleware, because it must run before the guards can refuse the request.
 */
@Injectable()
export class DeprecationHeadersMiddleware implements NestMiddleware {
  private readonly headers: [string, string][];

  constructor(@Inject(publicUrlsConfig.token) config: PublicUrlsConfig) {
    this.headers = [
      ['Deprecation', `@${Math.floor(GET_PET_DEPRECATED_AT.getTime() / 1000)}`],
      ['Sunset', GET_PET_SUNSET.toUTCString()],
      ['Link', `<${config.publicBaseUrl}/pets>; rel="successor-version"`],
    ];
  }

  use(_req: Request, res: Response, next: NextFunction): void {
    for (const [name, value] of this.headers) res.setHeader(name, value);
    next();
  }
}

/** From the sunset instant on, getPet answers 410 gone (after authentication and limits). */
@Injectable()
export class SunsetGuard implements CanActivate {
  constructor(private readonly clock: Clock) {}

  canActivate(): boolean {
    if (this.clock.now().getTime() >= GET_PET_SUNSET.getTime()) {
      throw new ApiError(
        410,
        'gone',
        `GET /pets/{petId} was removed on ${GET_PET_SUNSET.toUTCString()}; use GET /pets with the status filter.`,
      );
    }
    return true;
  }
}
