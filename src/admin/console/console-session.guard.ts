import {
  ArgumentsHost,
  CanActivate,
  Catch,
  ExceptionFilter,
  ExecutionContext,
  Inject,
  Injectable,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { AdminSessionsService } from '../../admin-sessions/admin-sessions.service.js';
import { adminConfig, type AdminConfig } from '../../config/admin.config.js';
import { ApiError } from '../../errors/api-error.js';
import { requestContext } from '../../request-context/request-context.js';
import { SIGN_IN_PATH, safeNext } from './console-paths.js';

/** The cookie that carries a console session's id. */
export const SESSION_COOKIE = 'admin_session';

/** The value of one cookie of a request, or undefined. */
export function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value of a session id; an empty id with Max-Age=0 clears the cookie. */
export function sessionCookie(id: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/admin; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** Whether the session cookie gets Secure: set by ADMIN_COOKIE_SECURE, or the request came over TLS. */
export function secureCookie(config: AdminConfig, req: Request): boolean {
  return config.adminCookieSecure || req.secure;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * A request that changes something must come from the console's own pages: its Origin is the
 * listener's origin (as the browser reached it: https when the cookie is Secure), or the browser
 * says Sec-Fetch-Site: same-origin. Else 403 cross_site_request, before anything is read or changed.
 */
export function checkSameOrigin(req: Request, config: AdminConfig): void {
  if (SAFE_METHODS.has(req.method)) return;
  if (req.headers['sec-fetch-site'] === 'same-origin') return;
  const host = req.headers.host;
  const origin = req.headers.origin;
  if (host !== undefined && origin !== undefined) {
    const scheme = secureCookie(config, req) ? 'https' : 'http';
    if (origin === `${scheme}://${host}`) return;
  }
  throw new ApiError(
    'cross_site_request',
    'This request must come from the console’s own pages (Origin or Sec-Fetch-Site).',
  );
}

/** Thrown when a console page needs a session and the request has none: answered with a redirect to sign-in. */
export class SignInRequired extends Error {
  constructor(readonly next: string) {
    super('sign-in required');
  }
}

/**
 * The console's guard: a live session (AdminSessionsService.check, which reads its token's
 * state each time) or a redirect to the sign-in page and back; for a change, the same-origin
 * check. The session's token becomes the request's actor, as a bearer token's does on the API.
 */
@Injectable()
export class ConsoleSessionGuard implements CanActivate {
  constructor(
    private readonly sessions: AdminSessionsService,
    @Inject(adminConfig.token) private readonly config: AdminConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    const id = cookieOf(req, SESSION_COOKIE);
    const session = id === undefined ? null : await this.sessions.check(id);
    if (session === null) {
      // A form posted after the session ended goes back to the overview once signed in again.
      throw new SignInRequired(SAFE_METHODS.has(req.method) ? req.originalUrl : '/admin/');
    }
    checkSameOrigin(req, this.config);
    Object.assign(requestContext(req), { adminActor: session.tokenName, adminTokenId: session.tokenId });
    return true;
  }
}

/** Answers SignInRequired: 303 to the sign-in page, with the page to come back to. */
@Catch(SignInRequired)
export class SignInRedirectFilter implements ExceptionFilter {
  catch(exception: SignInRequired, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const next = safeNext(exception.next);
    const target = next === '/admin/' ? SIGN_IN_PATH : `${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`;
    res.status(303).setHeader('Location', target);
    res.end();
  }
}
