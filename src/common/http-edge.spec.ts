import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { API_HELMET_OPTIONS, DOCS_HELMET_OPTIONS, recordHeaders, securityHeaders } from './http-edge.js';

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
    ['the API', '/v1/pets', API_HELMET_OPTIONS],
    ['Swagger UI', '/docs', DOCS_HELMET_OPTIONS],
    ['Swagger UI assets', '/docs/swagger-ui.css', DOCS_HELMET_OPTIONS],
  ])('gives %s exactly the headers helmet itself gives', async (_what, path, options) => {
    const fromHelmet = await headersOf(helmet(options), path);
    const ours = await headersOf(securityHeaders(), path);
    expect(ours).toEqual(fromHelmet);
    expect(ours['content-security-policy']).toBeDefined();
    expect(ours['x-powered-by']).toBeUndefined();
  });

  it('keeps the policies apart: the API denies everything, the docs page may load its own assets', async () => {
    const api = await headersOf(securityHeaders(), '/v1/pets');
    const docs = await headersOf(securityHeaders(), '/docs');
    expect(api['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
    expect(docs['content-security-policy']).toContain("script-src 'self'");
    expect(docs['content-security-policy']).not.toContain('upgrade-insecure-requests');
  });
});
