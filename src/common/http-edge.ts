import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppConfig } from '../config/config.js';

/**
 * Response headers a browser client may read across origins: paging, creation, retry and
 * deprecation signals, the request id, rate limits and idempotent replays.
 */
export const CORS_EXPOSED_HEADERS = [
  'Link',
  'Location',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Idempotent-Replayed',
];

/** CORS from CORS_ORIGINS (configureApp enables it only when the list is not empty). */
export function corsOptions(config: AppConfig): NonNullable<Parameters<INestApplication['enableCors']>[0]> {
  return {
    origin: config.corsOrigins[0] === '*' ? '*' : config.corsOrigins,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'],
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // API keys travel in Authorization, never in cookies: no credentialed requests.
    credentials: false,
    maxAge: 600,
  };
}

/**
 * Security headers (helmet). The API serves only JSON, so its Content-Security-Policy
 * allows nothing at all. Swagger UI at /docs loads its own scripts, styles and images and
 * fetches /openapi.json, so it gets helmet's default policy for pages instead, without
 * upgrade-insecure-requests (which would break the page served over plain HTTP locally).
 *
 * helmet's headers depend on its options only, never on the request (no nonces here), so each
 * policy is run once, at start, against a recording response, and every request then gets the
 * recorded headers in one loop instead of passing through helmet's chain of a dozen
 * middlewares (README, "Performance"). helmet stays the source of every header and value.
 */
export const API_HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
};
export const DOCS_HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};

export function securityHeaders() {
  const api = recordHeaders(helmet(API_HELMET_OPTIONS));
  const docs = recordHeaders(helmet(DOCS_HELMET_OPTIONS));
  return (req: Request, res: Response, next: NextFunction): void => {
    const isDocs = req.path === '/docs' || req.path.startsWith('/docs/');
    const headers = isDocs ? docs : api;
    for (const name of headers.removed) res.removeHeader(name);
    for (const [name, value] of headers.set) res.setHeader(name, value);
    next();
  };
}

interface RecordedHeaders {
  set: [string, string | number | readonly string[]][];
  removed: string[];
}

/** What a helmet middleware does to a response: the headers it sets and those it removes. */
export function recordHeaders(middleware: ReturnType<typeof helmet>): RecordedHeaders {
  const set = new Map<string, string | number | readonly string[]>();
  const removed: string[] = [];
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      set.set(name, value);
      return recorder;
    },
    removeHeader(name: string) {
      set.delete(name);
      removed.push(name);
    },
  };
  let completed = false;
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err instanceof Error ? err : new Error(String(err));
    completed = true;
  });
  // helmet is synchronous; a future version that is not would fail here, at start.
  if (!completed) throw new Error('helmet did not complete synchronously');
  return { set: [...set], removed };
}

/** Longest delay X-Test-Delay-Ms may ask for. */
const MAX_TEST_DELAY_MS = 60_000;

/**
 * Test only (ENABLE_TEST_DELAY=true, refused unless NODE_ENV=test): a request carrying
 * `X-Test-Delay-Ms: N` is held N ms before it is handled, so tests can have a request in
 * flight while the server shuts down.
 */
export function testDelayMiddleware() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const raw = req.headers['x-test-delay-ms'];
    const ms = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Math.min(Number(raw), MAX_TEST_DELAY_MS) : 0;
    if (ms === 0) return next();
    void sleep(ms).then(() => next());
  };
}
