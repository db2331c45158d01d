import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { recordHeaders } from '../library-internals/index.js';
import { API_HELMET_OPTIONS, DOCS_HELMET_OPTIONS, requestEdge } from './http-edge.js';

/** The edge with nothing to report to: only its headers are looked at here. */
const securityHeaders = () =>
  requestEdge(
    () => {},
    () => {},
  );

/** The response headers of GET `path` on an app with `middleware` first. */
async function headersOf(middleware: express.RequestHandler, path: string): Promise<Record<string, string>> {
  const app = express();
  app.disable('x-powered-by');
  // Set before the middleware: helmet removes it.
  app.use((_req, res, next) => {
    res.setHeader('X-Powered-By', 'something');
    next();
  });
  app.use(middleware);
  app.use((_req, res) => void res.status(204).end());
  const res = await request(app).get(path);
  const { date: _date, ...rest } = res.headers as Record<string, string>;
  return rest;
}

describe('securityHeaders', () => {
  it('records the headers helmet sets and removes', () => {
    const recorded = recordHeaders(helmet(API_HELMET_OPTIONS));
    expect(Object.fromEntries(recorded.set)).toMatchObject({
      'Content-Security-Policy': "default-src 'none';frame-ancestors 'none'",
      'X-Content-Type-Options': 'nosniff',
      'Strict-Transport-Security': expect.stringMatching(/^max-age=\d+/),
    });
    expect(recorded.removed).toContain('X-Powered-By');
  });

  it.each([
    ['the API', '/v1/pets', API_HELMET_OPTIONS, { 'cache-control': 'no-store' }],
    ['the probes', '/healthz', API_HELMET_OPTIONS, {}],
    ['Swagger UI', '/docs', DOCS_HELMET_OPTIONS, {}],
    ['Swagger UI assets', '/docs/swagger-ui.css', DOCS_HELMET_OPTIONS, {}],
  ])(
    'gives %s exactly the headers helmet itself gives (and no-store under /v1)',
    async (_what, path, options, extra) => {
      const fromHelmet = await headersOf(helmet(options), path);
      const { 'x-request-id': requestId, ...ours } = await headersOf(securityHeaders(), path);
      expect(ours).toEqual({ ...fromHelmet, ...extra });
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(ours['content-security-policy']).toBeDefined();
      expect(ours['x-powered-by']).toBeUndefined();
    },
  );

  it('keeps the policies apart: the API denies everything, the docs page may load its own assets', async () => {
    const api = await headersOf(securityHeaders(), '/v1/pets');
    const docs = await headersOf(securityHeaders(), '/docs');
    expect(api['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(docs['content-security-policy']).toContain("script-src 'self'");
    expect(docs['content-security-policy']).not.toContain('upgrade-insecure-requests');
  });

  it('gives a JSON API only the headers that apply to it', async () => {
    const api = await headersOf(securityHeaders(), '/v1/pets');
    expect(api['x-frame-options']).toBe('DENY');
    for (const documentOnly of [
      'cross-origin-opener-policy',
      'origin-agent-cluster',
      'x-dns-prefetch-control',
      'x-download-options',
      'x-xss-protection',
      'x-permitted-cross-domain-policies',
    ]) {
      expect(api[documentOnly]).toBeUndefined();
    }
  });
});

describe('requestEdge', () => {
  it('reports every request once, when its response is over, with its duration', async () => {
    const finished: { id?: string; status: number; ms: number }[] = [];
    let started = 0;
    const app = express();
    app.use(
      requestEdge(
        () => (started += 1),
        (req, res, ms) => finished.push({ id: req.id, status: res.statusCode, ms }),
      ),
    );
    app.use((_req, res) => void res.status(418).end());
    const res = await request(app).get('/v1/pets').set('X-Request-Id', 'edge-1');
    expect(res.headers['x-request-id']).toBe('edge-1');
    for (let i = 0; i < 100 && finished.length === 0; i++) await new Promise((r) => setImmediate(r));
    expect(started).toBe(1);
    expect(finished).toEqual([{ id: 'edge-1', status: 418, ms: expect.any(Number) }]);
    expect(finished[0].ms).toBeGreaterThanOrEqual(0);
  });
});
