import request from 'supertest';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AdminServer } from '../../src/admin/admin.server.js';

/** The operator console's exact Content-Security-Policy (docs/admin-console.md). */
export const CONSOLE_CSP =
  "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;frame-ancestors 'none';object-src 'none';base-uri 'none';form-action 'self'";

/** The headers every console page is sent with: HTML, the console's policy, never cached. */
export function expectConsolePageHeaders(res: { headers: Record<string, unknown> }): void {
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['referrer-policy']).toBe('same-origin');
  expect(res.headers['cache-control']).toBe('no-store');
}

/** A browser on the admin listener's console: its origin, and requests carrying a session cookie. */
export function consoleClient(app: NestExpressApplication) {
  const origin = () => `http://127.0.0.1:${app.get(AdminServer).port()}`;
  const agent = () => request(origin());
  return {
    origin,
    agent,
    /** Signs in with a token; the session cookie (name=value). */
    async signIn(token: string, next?: string): Promise<string> {
      const form: Record<string, string> = { token };
      if (next !== undefined) form.next = next;
      const res = await agent().post('/admin/sign-in').set('Origin', origin()).type('form').send(form);
      if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${res.text}`);
      const cookie = (res.headers['set-cookie'] as unknown as string[])[0];
      return cookie.split(';')[0];
    },
    get: (path: string, cookie: string) => agent().get(path).set('Cookie', cookie),
    /** A form posted from the console's own page. */
    post: (path: string, cookie: string, form: Record<string, string | string[]>) =>
      agent().post(path).set('Cookie', cookie).set('Origin', origin()).type('form').send(form),
  };
}
