import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { ShutdownService } from '../../src/lifecycle/shutdown.service.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { startTestApp } from '../support/app.js';
import { issueApiKey } from '../support/api-keys.js';
import { createTestDatabase, TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { sample } from '../support/metrics-text.js';
import { describeWithRedis, redisEnv } from '../support/redis-env.js';

/** A port nothing listens on (connections are refused at once). */
const CLOSED = '127.0.0.1:1';

function expectServiceUnavailable(res: request.Response, message: RegExp): void {
  expect(expectErrorBody(res, 503, 'service_unavailable', message).details).toBeUndefined();
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

describe('operations: request ids, metrics, readiness, edge headers', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;
  // With REDIS_URL (CI) the app counts in Redis and readiness reports it; without, in memory.
  const redis = redisEnv('operations');

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { env: { ...redis.env, CORS_ORIGINS: 'https://app.example.test' } });
    http = request(app.getHttpServer());
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    await redis.cleanup();
  });

  describe('X-Request-Id', () => {
    it('echoes a well-formed incoming id, on success and on errors', async () => {
      const ok = await http.get('/healthz').set('X-Request-Id', 'lb-7f3a.42_x');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-request-id']).toBe('lb-7f3a.42_x');
      const missing = await http.get('/v1/nothing-here').set('X-Request-Id', 'abc-123');
      expect(missing.status).toBe(404);
      expect(missing.headers['x-request-id']).toBe('abc-123');
    });

    it.each([['has spaces'], ['quote"d'], ['x'.repeat(129)], ['']])(
      'replaces a malformed id (%j) with a UUID',
      async (id) => {
        const res = await http.get('/healthz').set('X-Request-Id', id);
        expect(res.headers['x-request-id']).toMatch(
          /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
        );
      },
    );

    it('generates a different id for every request without one', async () => {
      const a = await http.get('/healthz');
      const b = await http.get('/healthz');
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });
  });

  describe('/metrics', () => {
    it('counts the requests made, by method, route template and status', async () => {
      const before = await http.get('/metrics');
      expect(before.status).toBe(200);
      expect(before.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      const count = (text: string, route: string, status: string) =>
        sample(text, 'http_request_duration_seconds_count', { method: 'GET', route, status_code: status }) ?? 0;

      const key = await issueApiKey(app);
      const pet = await http
        .post('/v1/pets')
        .set('Authorization', `Bearer ${key}`)
        .set('Content-Type', 'application/json')
        .send('{"name":"Counted","categoryId":1}');
      expect(pet.status).toBe(201);
      for (let i = 0; i < 3; i++)
        expect((await http.get(`/v1/pets/${pet.body.id}`).set('Authorization', `Bearer ${key}`)).status).toBe(200);
      for (let i = 0; i < 2; i++) expect((await http.get('/v1/pets')).status).toBe(401);
      expect((await http.get('/no/such/route')).status).toBe(404);

      const after = (await http.get('/metrics')).text;
      expect(count(after, '/v1/pets/:petId', '200') - count(before.text, '/v1/pets/:petId', '200')).toBe(3);
      expect(count(after, '/v1/pets', '401') - count(before.text, '/v1/pets', '401')).toBe(2);
      expect(count(after, 'unmatched', '404') - count(before.text, 'unmatched', '404')).toBe(1);
      expect(
        sample(after, 'http_request_duration_seconds_count', { method: 'POST', route: '/v1/pets', status_code: '201' }),
      ).toBe(1);
      // The raw path never becomes a label (unbounded cardinality).
      expect(after).not.toContain(`route="/v1/pets/${pet.body.id}"`);
      // The scrape itself is in flight while it renders.
      expect(sample(after, 'http_requests_in_flight', {})).toBeGreaterThanOrEqual(1);
      expect(after).toMatch(/^process_cpu_user_seconds_total \d/m);
      expect(after).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    });

    it('exposes the rate-limit, database and Redis error counters that other modules record', async () => {
      const metrics = app.get(MetricsService);
      const text0 = (await http.get('/metrics')).text;
      expect(sample(text0, 'rate_limit_rejections_total', { plan: 'free', code: 'rate_limit_exceeded' })).toBeDefined();
      metrics.rateLimitRejected('pro');
      metrics.rateLimitRejected('pro', 'api_key_temporarily_banned');
      metrics.redisError('rate-limit');
      metrics.databaseError('query');
      const text = (await http.get('/metrics')).text;
      const diff = (name: string, labels: Record<string, string>) =>
        (sample(text, name, labels) ?? 0) - (sample(text0, name, labels) ?? 0);
      expect(diff('rate_limit_rejections_total', { plan: 'pro', code: 'rate_limit_exceeded' })).toBe(1);
      expect(diff('rate_limit_rejections_total', { plan: 'pro', code: 'api_key_temporarily_banned' })).toBe(1);
      expect(diff('redis_errors_total', { source: 'rate-limit' })).toBe(1);
      expect(diff('database_errors_total', { kind: 'query' })).toBe(1);
    });
  });

  describe('edge headers', () => {
    it('sets helmet headers with a deny-all CSP on the API', async () => {
      const res = await http.get('/healthz');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
      expect(res.headers['x-powered-by']).toBeUndefined();
    });

    it('lets Swagger UI at /docs load its scripts and styles', async () => {
      const res = await http.get('/docs/');
      expect(res.status).toBe(200);
      const csp = res.headers['content-security-policy'] as string;
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self' https: 'unsafe-inline'");
      expect(csp).not.toContain('upgrade-insecure-requests');
    });

    it('answers CORS preflights for configured origins and exposes the API headers', async () => {
      const pre = await http
        .options('/v1/pets')
        .set('Origin', 'https://app.example.test')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization,content-type,idempotency-key');
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('https://app.example.test');
      expect(pre.headers['access-control-allow-headers']).toMatch(/Idempotency-Key/);
      const res = await http.get('/v1/pets').set('Origin', 'https://app.example.test');
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example.test');
      const exposed = (res.headers['access-control-expose-headers'] as string).split(',');
      for (const h of [
        'Link',
        'Location',
        'Retry-After',
        'Deprecation',
        'Sunset',
        'X-Request-Id',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'RateLimit-Policy',
        'RateLimit',
        'Idempotent-Replayed',
      ]) {
        expect(exposed).toContain(h);
      }
    });

    it('gives no CORS grant to other origins', async () => {
      const res = await http.get('/v1/pets').set('Origin', 'https://evil.example.test');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('health', () => {
    it('/healthz is 200 without an API key and is never cached', async () => {
      const res = await http.get('/healthz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
      expect(res.headers['cache-control']).toMatch(/no-store/);
    });

    it('/readyz reports the database and migrations up', async () => {
      const res = await http.get('/readyz');
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('ok');
      expect(res.body.details).toEqual({
        database: expect.objectContaining({ status: 'up' }),
        migrations: expect.objectContaining({ status: 'up' }),
        // Redis only when the app has one (below).
        ...(redis.prefix === undefined ? {} : { redis: expect.anything() }),
      });
    });

    describeWithRedis('with REDIS_URL', () => {
      it('/readyz reports Redis up too', async () => {
        const res = await http.get('/readyz');
        expect(res.status).toBe(200);
        expect(res.body.status).toBe('ok');
        expect(res.body.details.redis).toEqual(expect.objectContaining({ status: 'up' }));
      });
    });

    // Last: shutting down cannot be undone.
    it('/readyz turns 503 once shutdown begins, while /healthz stays 200', async () => {
      app.get(ShutdownService).begin();
      expectServiceUnavailable(await http.get('/readyz'), /shutting down/);
      expect((await http.get('/healthz')).status).toBe(200);
    });
  });
});

describe('readiness when the database is unreachable (and a metrics token)', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  const token = 'metrics-token-0123456789abcdef';

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, {
      env: { DATABASE_URL: `postgresql://postgres@${CLOSED}/none`, DB_CONNECT_TIMEOUT_MS: '500', METRICS_TOKEN: token },
    });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('answers /readyz 503 service_unavailable with Retry-After, leaking nothing, and counts the error', async () => {
    const res = await request(app.getHttpServer()).get('/readyz');
    expectServiceUnavailable(res, /database is unreachable/);
    expect(res.text).not.toMatch(/ECONN|127\.0\.0\.1|pg|SELECT/i);
    expect((await request(app.getHttpServer()).get('/healthz')).status).toBe(200);
    const metrics = await request(app.getHttpServer()).get('/metrics').set('Authorization', `Bearer ${token}`);
    expect(sample(metrics.text, 'database_errors_total', { kind: 'unavailable' })).toBeGreaterThanOrEqual(1);
  });

  it('protects /metrics with METRICS_TOKEN when it is set', async () => {
    const none = await request(app.getHttpServer()).get('/metrics');
    expect(expectErrorBody(none, 401, 'missing_api_key').details).toBeUndefined();
    const wrong = await request(app.getHttpServer())
      .get('/metrics')
      .set('Authorization', 'Bearer not-the-token-at-all');
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('invalid_api_key');
    const ok = await request(app.getHttpServer()).get('/metrics').set('Authorization', `bearer ${token}`);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('http_request_duration_seconds');
  });
});

describe('readiness when Redis is unreachable', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { env: { REDIS_URL: `redis://${CLOSED}`, REDIS_CONNECT_TIMEOUT_MS: '200' } });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('stays 200 but reports degraded: the rate limiter falls back to per-instance counters', async () => {
    const res = await request(app.getHttpServer()).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('degraded');
    expect(res.body.details.redis).toEqual(expect.objectContaining({ status: 'degraded' }));
    expect(res.body.details.database.status).toBe('up');
    // What went wrong is logged, not told to whoever asks.
    expect(res.text).not.toMatch(/ECONN|127\.0\.0\.1|connect/i);
  });
});
