import { ArgumentsHost, BadRequestException, Logger, NotFoundException } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ApiError } from './api-error.js';
import { AllExceptionsFilter } from './all-exceptions.filter.js';

interface Captured {
  status?: number;
  headers: Record<string, string>;
  body?: string;
  type?: string;
  destroyed: boolean;
}

function run(
  exception: unknown,
  opts: { path?: string; method?: string; headersSent?: boolean; routes?: unknown[]; id?: string | null } = {},
) {
  const captured: Captured = { headers: {}, destroyed: false };
  const res = {
    headersSent: opts.headersSent ?? false,
    setHeader: (k: string, v: string) => (captured.headers[k.toLowerCase()] = v),
    removeHeader: (k: string) => delete captured.headers[k.toLowerCase()],
    status(s: number) {
      captured.status = s;
      return this;
    },
    type(t: string) {
      captured.type = t;
      return this;
    },
    send(b: string) {
      captured.body = b;
      return this;
    },
    destroy: () => (captured.destroyed = true),
  };
  const req = {
    method: opts.method ?? 'GET',
    path: opts.path ?? '/v1/pets',
    headers: {},
    id: opts.id === null ? undefined : (opts.id ?? 'req-1'),
  };
  const host = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ArgumentsHost;
  const adapterHost = {
    httpAdapter: { getInstance: () => ({ router: { stack: opts.routes ?? [] } }) },
  } as unknown as HttpAdapterHost;
  new AllExceptionsFilter(adapterHost).catch(exception, host);
  return { ...captured, json: captured.body ? JSON.parse(captured.body) : undefined };
}

describe('AllExceptionsFilter', () => {
  let errorLog: jest.SpyInstance;
  beforeEach(() => {
    errorLog = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it("puts the request's id in the body, and gives a request without one an id in the body and the header alike", () => {
    expect(run(new ApiError('not_found', 'No.'), { id: 'abc-123' }).json.requestId).toBe('abc-123');
    const out = run(new ApiError('not_found', 'No.'), { id: null });
    expect(out.json.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.headers['x-request-id']).toBe(out.json.requestId);
  });

  it('writes an ApiError as the Error body with its headers', () => {
    const out = run(new ApiError('rate_limit_exceeded', 'Slow down.', { headers: { 'Retry-After': '3' } }));
    expect(out.status).toBe(429);
    expect(out.type).toBe('application/json');
    expect(out.json).toEqual({ code: 'rate_limit_exceeded', message: 'Slow down.', status: 429, requestId: 'req-1' });
    expect(out.headers['retry-after']).toBe('3');
  });

  it('adds WWW-Authenticate to every 401', () => {
    const out = run(new ApiError('missing_api_key', 'No key.'));
    expect(out.headers['www-authenticate']).toBe('Bearer realm="animal-store"');
  });

  it('answers an unexpected error with a generic 500 and logs it in full', () => {
    const out = run(new TypeError('secret internals: SELECT * FROM pets'));
    expect(out.status).toBe(500);
    expect(out.json).toEqual({
      code: 'internal_error',
      message: 'An unexpected error occurred.',
      status: 500,
      requestId: 'req-1',
    });
    expect(out.body).not.toContain('SELECT');
    expect(errorLog).toHaveBeenCalledWith(expect.stringContaining('secret internals'), expect.any(String));
  });

  it('answers database unavailability with 503 and Retry-After', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const out = run(new Error('wrapped', { cause: err }));
    expect(out.status).toBe(503);
    expect(out.json.code).toBe('service_unavailable');
    expect(Number(out.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(out.body).not.toContain('ECONNREFUSED');
  });

  it('maps framework exceptions to the error codes of the API, without their own body shape', () => {
    const out = run(new BadRequestException('bad'));
    expect(out.json).toEqual({ code: 'validation_failed', message: 'bad', status: 400, requestId: 'req-1' });
  });

  it('tells an unknown route (404) from a known path with another method (405, Allow)', () => {
    const routes = [{ route: { methods: { get: true, post: true } }, match: (p: string) => p === '/v1/pets' }];
    const missing = run(new NotFoundException('Cannot GET /v1/nope'), { path: '/v1/nope', routes });
    expect(missing.json).toEqual({
      code: 'route_not_found',
      message: expect.any(String),
      status: 404,
      requestId: 'req-1',
    });
    const wrong = run(new NotFoundException('Cannot DELETE /v1/pets'), { method: 'DELETE', routes });
    expect(wrong.status).toBe(405);
    expect(wrong.json.code).toBe('method_not_allowed');
    expect(wrong.headers.allow).toBe('GET, HEAD, POST');
  });

  it('cuts the connection when the response has already started', () => {
    const out = run(new Error('late'), { headersSent: true });
    expect(out.destroyed).toBe(true);
    expect(out.body).toBeUndefined();
  });
});
