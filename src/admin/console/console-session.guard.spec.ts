import type { Request } from 'express';
import type { AdminConfig } from '../../config/admin.config.js';
import { ApiError } from '../../errors/api-error.js';
import { checkSameOrigin, cookieOf, secureCookie, sessionCookie } from './console-session.guard.js';

const config = (adminCookieSecure: boolean) => ({ adminCookieSecure }) as AdminConfig;
const req = (headers: Record<string, string>, extra: Partial<Request> = {}) =>
  ({ method: 'POST', secure: false, headers, ...extra }) as unknown as Request;

describe('the console’s session cookie and same-origin check', () => {
  it('adds Secure when ADMIN_COOKIE_SECURE is set or the request came over TLS, and only then', () => {
    expect(sessionCookie('abc', 60, true)).toBe(
      'admin_session=abc; Path=/admin; Max-Age=60; HttpOnly; SameSite=Strict; Secure',
    );
    expect(secureCookie(config(true), req({}))).toBe(true);
    expect(secureCookie(config(false), req({}, { secure: true }))).toBe(true);
    expect(secureCookie(config(false), req({}))).toBe(false);
  });

  it('reads one cookie among others', () => {
    expect(cookieOf(req({ cookie: 'a=1; admin_session=xyz; b=2' }), 'admin_session')).toBe('xyz');
    expect(cookieOf(req({ cookie: 'xadmin_session=1' }), 'admin_session')).toBeUndefined();
  });

  it('expects the https origin behind TLS (ADMIN_COOKIE_SECURE), the http one otherwise', () => {
    const host = { host: 'console.example:9100' };
    expect(() => checkSameOrigin(req({ ...host, origin: 'https://console.example:9100' }), config(true))).not.toThrow();
    expect(() => checkSameOrigin(req({ ...host, origin: 'http://console.example:9100' }), config(true))).toThrow(
      ApiError,
    );
    expect(() => checkSameOrigin(req({ ...host, origin: 'http://console.example:9100' }), config(false))).not.toThrow();
    expect(() => checkSameOrigin(req({ ...host, origin: 'http://console.example:9101' }), config(false))).toThrow(
      expect.objectContaining({ code: 'cross_site_request', status: 403 }),
    );
    expect(() => checkSameOrigin(req({ ...host, 'sec-fetch-site': 'same-site' }), config(false))).toThrow(ApiError);
    expect(() => checkSameOrigin(req({ ...host }, { method: 'GET' }), config(false))).not.toThrow();
  });
});
