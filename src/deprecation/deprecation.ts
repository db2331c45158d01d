import {
  applyDecorators,
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { ApiError } from '../errors/api-error.js';
import { Clock } from '../time/clock.js';
import { publicUrlsConfig, type PublicUrlsConfig } from '../config/public-urls.config.js';

/** What @Deprecated() says of an operation. */
export interface DeprecationSpec {
  /** When it was deprecated (the Deprecation header, RFC 9745). */
  deprecatedAt: Date;
  /** When it is removed (the Sunset header, RFC 8594): from then on it answers 410. */
  sunset: Date;
  /** The operation that replaces it, relative to the public base URL (Link rel="successor-version"). */
  successor: string;
  /** The message of the 410 from the sunset on: what was removed and what to use instead. */
  gone: string;
}

const DEPRECATION = 'animal-store:deprecation';

/** Decorator metadata is fixed once the classes are defined: each handler's is read once. */
const specs = new WeakMap<object, DeprecationSpec | null>();

/** The @Deprecated() spec of a handler, or null. */
function deprecationOf(reflector: Reflector, handler: object): DeprecationSpec | null {
  let spec = specs.get(handler);
  if (spec === undefined) {
    spec = reflector.get<DeprecationSpec | undefined>(DEPRECATION, handler as () => unknown) ?? null;
    specs.set(handler, spec);
  }
  return spec;
}

/**
 * Marks an operation deprecated: every response of it, errors included, carries Deprecation,
 * Sunset and the successor Link (DeprecationHeadersGuard), and from the sunset on it answers
 * 410 gone, after authentication and limits (SunsetGuard). The OpenAPI `deprecated: true`
 * stays in @ApiOperation, beside the description that says it.
 */
export const Deprecated = (spec: DeprecationSpec): MethodDecorator =>
  applyDecorators(SetMetadata(DEPRECATION, spec), UseGuards(SunsetGuard));

/**
 * Sets the deprecation headers of an operation marked @Deprecated(). A global guard, the first
 * of them (AppModule), so the headers are on the response before any guard can refuse the
 * request (a 401 or a 429 of a deprecated operation carries them too). A guard rather than a
 * route middleware: Nest mounts a middleware as one more Express route that every request is
 * matched against, while a guard reads its handler's metadata, remembered per handler.
 */
@Injectable()
export class DeprecationHeadersGuard implements CanActivate {
  private readonly headers = new WeakMap<object, [string, string][] | null>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(publicUrlsConfig.token) private readonly config: PublicUrlsConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const headers = this.headersOf(context.getHandler());
    if (headers !== null) {
      const res = context.switchToHttp().getResponse<Response>();
      for (let i = 0; i < headers.length; i++) res.setHeader(headers[i][0], headers[i][1]);
    }
    return true;
  }

  /** The headers of a handler's deprecation, or null; built once per handler. */
  private headersOf(handler: object): [string, string][] | null {
    let headers = this.headers.get(handler);
    if (headers === undefined) {
      const spec = deprecationOf(this.reflector, handler);
      headers =
        spec === null
          ? null
          : [
              ['Deprecation', `@${Math.floor(spec.deprecatedAt.getTime() / 1000)}`],
              ['Sunset', spec.sunset.toUTCString()],
              ['Link', `<${this.config.publicBaseUrl}${spec.successor}>; rel="successor-version"`],
            ];
      this.headers.set(handler, headers);
    }
    return headers;
  }
}

/** From the sunset instant of an operation marked @Deprecated() on, it answers 410 gone. */
@Injectable()
export class SunsetGuard implements CanActivate {
  constructor(
    private readonly clock: Clock,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const spec = deprecationOf(this.reflector, context.getHandler());
    if (spec !== null && this.clock.now().getTime() >= spec.sunset.getTime()) throw new ApiError('gone', spec.gone);
    return true;
  }
}
