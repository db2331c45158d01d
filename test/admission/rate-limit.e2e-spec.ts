import { execFileSync } from 'node:child_process';
import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Redis } from 'ioredis';
import { parseItem, parseList } from 'structured-headers';
import request from 'supertest';
import { generateApiKey } from '../../src/api-keys/api-key-format.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { issueApiKey } from '../support/api-keys.js';
import { createTestDatabase, describeIfPostgres, TestDatabase } from '../support/databases.js';
import { describeIf } from '../support/describe-if.js';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.js';
import { describeWithRedis, dropRedisKeys, redisPrefix, redisUrl } from '../support/redis-env.js';
import { AppBehindProxy, startAppBehindProxy } from '../support/app-behind-proxy.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { expectErrorBody } from '../support/error-body.js';
import { waitFor } from '../support/wait-for.js';

const HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
/** The IETF fields (draft-ietf-httpapi-ratelimit-headers-11) beside them. */
const IETF_HEADERS = ['ratelimit-policy', 'ratelimit'];

/** Unix seconds of an ISO instant. */
const epoch = (iso: string): number => Date.parse(iso) / 1000;

function limits(res: request.Response | Response): { limit: number; remaining: number; reset: number } {
  const get = (name: string): string | null | undefined =>
    'headers' in res && typeof (res.headers as Headers).get === 'function'
      ? (res.headers as Headers).get(name)
      : (res as request.Response).headers[name];
  return {
    limit: Number(get('x-ratelimit-limit')),
    remaining: Number(get('x-ratelimit-remaining')),
    reset: Number(get('x-ratelimit-reset')),
  };
}

/** RateLimit-Policy and RateLimit as a client reads them, with a Structured Fields parser. */
function ietf(res: request.Response): {
  policy: [string, { q: number; w: number }][];
  window: string;
  r: number;
  t: number;
} {
  const policy = parseList(res.headers['ratelimit-policy'] as string).map(
    ([name, params]) =>
      [name as string, Object.fromEntries(params) as { q: number; w: number }] as [string, { q: number; w: number }],
  );
  const [window, params] = parseItem(res.headers.ratelimit as string);
  const { r, t } = Object.fromEntries(params) as { r: number; t: number };
  return { policy, window: window as string, r, t };
}

/**
 * Exactly the headers of docs/api.md ("Rate limits") and the IETF ones, saying the same: no
 * stock throttler ones (suffixed names, seconds-until-reset). RateLimit names the window the
 * X-RateLimit-* triple describes, with its remaining count; on a 429, its t is Retry-After.
 */
function expectOnlyContractHeaders(res: request.Response): void {
  for (const h of HEADERS) expect(res.headers[h]).toMatch(/^\d+$/);
  const stray = Object.keys(res.headers).filter(
    (h) => /ratelimit|retry-after-/i.test(h) && !HEADERS.includes(h) && !IETF_HEADERS.includes(h),
  );
  expect(stray).toEqual([]);
  const { policy, window, r, t } = ietf(res);
  expect(policy.map(([name, { w }]) => [name, w])).toEqual([
    ['minute', 60],
    ['day', 86_400],
  ]);
  expect(policy.find(([name]) => name === window)?.[1].q).toBe(Number(res.headers['x-ratelimit-limit']));
  expect(r).toBe(Number(res.headers['x-ratelimit-remaining']));
  expect(t).toBeGreaterThanOrEqual(1);
  if (res.status === 429) expect(t).toBe(Number(res.headers['retry-after']));
}

function expect429(
  res: request.Response,
  code: 'rate_limit_exceeded' | 'api_key_temporarily_banned',
  retryAfter: number,
): void {
  expectErrorBody(res, 429, code);
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expectOnlyContractHeaders(res);
}

function planLimits(store: 'memory' | 'redis'): void {
  const prefix = redisPrefix(`rl:${store}`);
  let db: TestDatabase;
  let app: NestExpressApplication;
  const clock = new FakeClock();
  let day = 0;
  /** Noon (plus 10 s) of a day no earlier test used: address counters start afresh. */
  let noon: string;
  let base: string;
  const http = () => request(base);
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    const env: Record<string, string> = store === 'redis' ? { REDIS_URL: redisUrl()!, RATE_LIMIT_PREFIX: prefix } : {};
    app = await startTestApp(db, { clock, env });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    await dropRedisKeys(prefix);
  });

  beforeEach(() => {
    day += 1;
    noon = `2027-01-${String(day).padStart(2, '0')}T12:00:10Z`;
    clock.set(noon);
  });

  it('describes the minute window on a fresh free key: limit, remaining, reset in epoch seconds', async () => {
    const key = await issueApiKey(app, { plan: 'free' });
    const first = await http().get('/v1/pets').set(as(key));
    expect(first.status).toBe(200);
    expectOnlyContractHeaders(first);
    expect(limits(first)).toEqual({ limit: 60, remaining: 59, reset: epoch(noon.replace('12:00:10', '12:01:00')) });
    expect(first.headers['ratelimit-policy']).toBe('"minute";q=60;w=60, "day";q=1000;w=86400');
    expect(first.headers.ratelimit).toBe('"minute";r=59;t=50');
    expect(first.headers['retry-after']).toBeUndefined();
    const second = await http().get('/v1/pets').set(as(key));
    expect(limits(second).remaining).toBe(58);
  });

  it('puts the headers on every error status, counting each request once per key across routes', async () => {
    const key = await issueApiKey(app, { plan: 'pro' });
    const json = { 'Content-Type': 'application/json' };
    const cases: [string, () => request.Test, number][] = [
      ['200 list', () => http().get('/v1/pets').set(as(key)), 200],
      ['201 create', () => http().post('/v1/pets').set(as(key)).set(json).send('{"name":"Rex","categoryId":1}'), 201],
      ['400 bad limit', () => http().get('/v1/pets?limit=0').set(as(key)), 400],
      ['400 malformed JSON', () => http().post('/v1/pets').set(as(key)).set(json).send('{"name":'), 400],
      ['404 no such pet', () => http().get('/v1/pets/999999').set(as(key)), 404],
      ['404 no such route', () => http().get('/v1/nothing-here').set(as(key)), 404],
      ['405 method', () => http().delete('/v1/pets').set(as(key)), 405],
      [
        '413 body too large',
        () =>
          http()
            .post('/v1/pets')
            .set(as(key))
            .set(json)
            .send(`{"name":"${'x'.repeat(20_000)}","categoryId":1}`),
        413,
      ],
      ['415 not JSON', () => http().post('/v1/pets').set(as(key)).set('Content-Type', 'text/plain').send('hello'), 415],
    ];
    let n = 0;
    for (const [what, send, status] of cases) {
      const res = await send();
      n += 1;
      expect([what, res.status]).toEqual([what, status]);
      expectOnlyContractHeaders(res);
      expect([what, limits(res)]).toEqual([
        what,
        { limit: 300, remaining: 300 - n, reset: epoch(noon.replace('12:00:10', '12:01:00')) },
      ]);
    }
    clock.set('2031-01-01T12:00:10Z'); // after getPet's sunset
    const gone = await http().get('/v1/pets/1').set(as(key));
    expect(gone.status).toBe(410);
    expectOnlyContractHeaders(gone);
    expect(limits(gone)).toEqual({ limit: 300, remaining: 299, reset: epoch('2031-01-01T12:01:00Z') });
    expect(gone.headers['ratelimit-policy']).toBe('"minute";q=300;w=60, "day";q=10000;w=86400');
    expect(gone.headers.ratelimit).toBe('"minute";r=299;t=50');
  });

  it('limits requests without a valid key per address at the free rates, 401s included', async () => {
    const missing = await http().get('/v1/pets');
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('missing_api_key');
    expectOnlyContractHeaders(missing);
    expect(limits(missing)).toEqual({ limit: 60, remaining: 59, reset: epoch(noon.replace('12:00:10', '12:01:00')) });
    expect(missing.headers.ratelimit).toBe('"minute";r=59;t=50');
    const invalid = await http().get('/v1/pets').set(as(generateApiKey()));
    expect(invalid.status).toBe(401);
    expect(limits(invalid).remaining).toBe(58);
    // Without TRUST_PROXY, X-Forwarded-For is not believed: still the same address.
    const forwarded = await http().get('/v1/pets').set('X-Forwarded-For', '203.0.113.9');
    expect(limits(forwarded).remaining).toBe(57);
    // A valid key has its own counter.
    const key = await issueApiKey(app, { plan: 'free' });
    expect(limits(await http().get('/v1/pets').set(as(key))).remaining).toBe(59);
    // Public routes outside /v1 are not limited and carry no headers.
    const health = await http().get('/healthz');
    expect(health.headers['x-ratelimit-limit']).toBeUndefined();
    expect(health.headers.ratelimit).toBeUndefined();
    expect(health.headers['ratelimit-policy']).toBeUndefined();
  });

  it('refuses the 61st request of a minute with 429 and Retry-After, and lets the next minute in', async () => {
    const key = await issueApiKey(app, { plan: 'free' });
    for (let i = 1; i <= 60; i++) {
      const res = await http().get('/v1/pets').set(as(key));
      expect([i, res.status, limits(res).remaining]).toEqual([i, 200, 60 - i]);
    }
    clock.set(noon.replace('12:00:10', '12:00:20.500'));
    const refused = await http().get('/v1/pets').set(as(key));
    expect429(refused, 'rate_limit_exceeded', 40); // 39.5 s to 12:01:00, rounded up
    expect(limits(refused)).toEqual({ limit: 60, remaining: 0, reset: epoch(noon.replace('12:00:10', '12:01:00')) });
    expect(refused.headers.ratelimit).toBe('"minute";r=0;t=40');
    clock.set(noon.replace('12:00:10', '12:00:59.999'));
    expect429(await http().get('/v1/pets').set(as(key)), 'rate_limit_exceeded', 1);
    clock.set(noon.replace('12:00:10', '12:01:00'));
    const next = await http().get('/v1/pets').set(as(key));
    expect(next.status).toBe(200);
    expect(limits(next)).toEqual({ limit: 60, remaining: 59, reset: epoch(noon.replace('12:00:10', '12:02:00')) });
  });

  it('bans a key refused more than 20 times in one limited period for 15 minutes', async () => {
    /** The rejection counter of /metrics for plan free and one code. */
    const rejected = async (code: string): Promise<number> => {
      const text = (await http().get('/metrics')).text;
      const line = text
        .split('\n')
        .find(
          (l) =>
            l.startsWith('rate_limit_rejections_total{') && l.includes('plan="free"') && l.includes(`code="${code}"`),
        );
      return line ? Number(line.split(' ').pop()) : 0;
    };
    /** Bans started for plan free, from /metrics. */
    const bans = async (): Promise<number> => {
      const line = (await http().get('/metrics')).text
        .split('\n')
        .find((l) => l.startsWith('rate_limit_bans_total{') && l.includes('plan="free"'));
      return line ? Number(line.split(' ').pop()) : -1;
    };
    const before = {
      limited: await rejected('rate_limit_exceeded'),
      banned: await rejected('api_key_temporarily_banned'),
      bans: await bans(),
    };
    expect(before.bans).toBeGreaterThanOrEqual(0);
    const key = await issueApiKey(app, { plan: 'free' });
    for (let i = 0; i < 60; i++) expect((await http().get('/v1/pets').set(as(key))).status).toBe(200);
    for (let i = 0; i < 20; i++) expect429(await http().get('/v1/pets').set(as(key)), 'rate_limit_exceeded', 50);
    const banned = await http().get('/v1/pets').set(as(key));
    expect429(banned, 'api_key_temporarily_banned', 900);
    expect(await rejected('rate_limit_exceeded')).toBe(before.limited + 20);
    expect(await rejected('api_key_temporarily_banned')).toBe(before.banned + 1);
    expect(limits(banned)).toEqual({ limit: 60, remaining: 0, reset: epoch(noon) + 900 });
    expect(banned.headers.ratelimit).toBe('"minute";r=0;t=900');
    // Still banned in the next minute windows, to the last second; other keys are unaffected.
    clock.set(new Date(Date.parse(noon) + 899_000));
    expect429(await http().get('/v1/pets').set(as(key)), 'api_key_temporarily_banned', 1);
    // One ban started, however many requests it refused.
    expect(await bans()).toBe(before.bans + 1);
    const other = await issueApiKey(app, { plan: 'free' });
    expect((await http().get('/v1/pets').set(as(other))).status).toBe(200);
    clock.set(new Date(Date.parse(noon) + 900_000));
    const back = await http().get('/v1/pets').set(as(key));
    expect(back.status).toBe(200);
    expect(limits(back)).toEqual({ limit: 60, remaining: 59, reset: epoch(noon.replace('12:00:10', '12:16:00')) });
  });

  it('holds an enterprise key to its own per-day limit of 5 until midnight UTC', async () => {
    const key = await issueApiKey(app, { plan: 'enterprise', perMinute: 5, perDay: 5 });
    const midnight = epoch(
      noon.replace(/-(\d\d)T12:00:10Z/, (_m, d: string) => `-${String(Number(d) + 1).padStart(2, '0')}T00:00:00Z`),
    );
    for (let i = 1; i <= 5; i++) {
      clock.set(noon.replace('12:00', `12:0${i}`)); // one request a minute: only the day fills up
      const res = await http().get('/v1/pets').set(as(key));
      expect(res.status).toBe(200);
      expect(limits(res)).toEqual({ limit: 5, remaining: 5 - i, reset: midnight });
      expectOnlyContractHeaders(res);
      // The policy is the key's own limits.
      expect(res.headers['ratelimit-policy']).toBe('"minute";q=5;w=60, "day";q=5;w=86400');
      expect(ietf(res)).toMatchObject({
        window: 'day',
        r: 5 - i,
        t: midnight - Math.floor(clock.now().getTime() / 1000),
      });
    }
    clock.set(noon.replace('12:00:10', '18:30:00'));
    const refused = await http().get('/v1/pets').set(as(key));
    expect429(refused, 'rate_limit_exceeded', 5.5 * 3600);
    expect(limits(refused)).toEqual({ limit: 5, remaining: 0, reset: midnight });
    expect(refused.headers.ratelimit).toBe(`"day";r=0;t=${5.5 * 3600}`);
    clock.set(new Date(midnight * 1000));
    const tomorrow = await http().get('/v1/pets').set(as(key));
    expect(tomorrow.status).toBe(200);
    expect(limits(tomorrow)).toEqual({ limit: 5, remaining: 4, reset: midnight + 86_400 });
  });

  it('on a tie in remaining describes the window that resets later', async () => {
    const key = await issueApiKey(app, { plan: 'enterprise', perMinute: 5, perDay: 5 });
    const res = await http().get('/v1/pets').set(as(key));
    expect(limits(res)).toEqual({
      limit: 5,
      remaining: 4,
      reset: epoch(noon.replace('12:00:10', '00:00:00')) + 86_400,
    });
  });

  it('documents the headers on every response of every operation, and Retry-After on 429', async () => {
    const documented = [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'RateLimit-Policy',
      'RateLimit',
    ];
    const doc = (await http().get('/openapi.json')).body as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { headers?: Record<string, { $ref?: string }> }> }>
      >;
      components: { headers: Record<string, unknown> };
    };
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item));
    expect(operations.length).toBeGreaterThanOrEqual(3);
    for (const op of operations) {
      expect(Object.keys(op.responses)).toContain('429');
      for (const [status, response] of Object.entries(op.responses)) {
        for (const h of documented) {
          expect([status, h, response.headers?.[h]?.$ref]).toEqual([status, h, `#/components/headers/${h}`]);
        }
        if (status === '429')
          expect(response.headers?.['Retry-After']?.$ref).toBe('#/components/headers/RateLimitRetryAfter');
      }
    }
    expect(Object.keys(doc.components.headers)).toEqual(expect.arrayContaining([...documented, 'RateLimitRetryAfter']));
  });

  it('lets exactly 60 of 200 concurrent requests with a free key through', async () => {
    const key = await issueApiKey(app, { plan: 'free' });
    const results = await Promise.all(
      Array.from({ length: 200 }, () => fetch(`${base}/v1/pets`, { headers: as(key) })),
    );
    await Promise.all(results.map((r) => r.arrayBuffer()));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(140);
    // Each allowed request saw a distinct remaining count: 59 down to 0.
    const remaining = results.filter((r) => r.status === 200).map((r) => limits(r).remaining);
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });
}

describe('plan rate limits with the memory store', () => planLimits('memory'));
describeWithRedis('plan rate limits with the redis store', () => planLimits('redis'));

describe('addresses behind a trusted proxy', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { clock: new FakeClock(), env: { TRUST_PROXY: 'true' } });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('count per X-Forwarded-For client when TRUST_PROXY believes it', async () => {
    const http = () => request(app.getHttpServer());
    expect(limits(await http().get('/v1/pets').set('X-Forwarded-For', '203.0.113.1')).remaining).toBe(59);
    expect(limits(await http().get('/v1/pets').set('X-Forwarded-For', '203.0.113.1')).remaining).toBe(58);
    expect(limits(await http().get('/v1/pets').set('X-Forwarded-For', '203.0.113.2')).remaining).toBe(59);
    // IPv6 clients count per /64.
    expect(limits(await http().get('/v1/pets').set('X-Forwarded-For', '2001:db8:1:2::1')).remaining).toBe(59);
    expect(limits(await http().get('/v1/pets').set('X-Forwarded-For', '2001:db8:1:2::ffff')).remaining).toBe(58);
  });
});

describeIfPostgres('rate limits while the database is down', () => {
  let setup: AppBehindProxy;
  let app: NestExpressApplication;
  let proxy: TcpProxy;

  beforeAll(async () => {
    setup = await startAppBehindProxy({ clock: new FakeClock(), env: { API_KEY_CACHE_TTL_MS: '4000' } });
    ({ app, proxy } = setup);
  });

  afterAll(async () => {
    await setup?.close();
  });

  it('still puts the headers on 503, per key when the key is known, else per address', async () => {
    const http = () => request(app.getHttpServer());
    const key = await issueApiKey(app, { plan: 'free' });
    expect(limits(await http().get('/v1/pets').set('Authorization', `Bearer ${key}`)).remaining).toBe(59);
    await proxy.stop();
    const cached = await http().get('/v1/pets').set('Authorization', `Bearer ${key}`);
    expect(cached.status).toBe(503);
    expectOnlyContractHeaders(cached);
    expect(limits(cached).remaining).toBe(58);
    const unknown = await http().get('/v1/pets').set('Authorization', `Bearer ${generateApiKey()}`);
    expect(unknown.status).toBe(503);
    expect(unknown.body.code).toBe('service_unavailable');
    // Without a valid key the request is counted against its address (the valid key's requests
    // never were: 59 left).
    expect(limits(unknown)).toEqual(expect.objectContaining({ limit: 60, remaining: 59 }));
    // A key that cannot be checked is a 503, never a 429, even past the address's free allowance:
    // it may be a valid key, which its address never refuses. Each is still counted.
    const more = await Promise.all(
      Array.from({ length: 65 }, () => http().get('/v1/pets').set('Authorization', `Bearer ${generateApiKey()}`)),
    );
    const outcomes = new Set(more.map((r) => `${r.status} ${r.body.code}`));
    expect(outcomes).toEqual(new Set(['503 service_unavailable']));
    expect(more.map((r) => limits(r).remaining).sort((a, b) => a - b)[0]).toBe(0);
  }, 60_000);
});

/** Two instances of one deployment need both servers. */
const describeWithRedisAndPostgres = describeIf(
  Boolean(redisUrl() && process.env.DATABASE_URL),
  'REDIS_URL or DATABASE_URL is unset: rate limits shared through Redis by two instances are not tested',
);

describeWithRedisAndPostgres('rate limits shared by two instances through Redis', () => {
  const prefix = redisPrefix('rl:shared');
  let db: TestDatabase;
  const apps: NestExpressApplication[] = [];
  const urls: string[] = [];
  const clock = new FakeClock(new Date('2027-02-01T12:00:10Z'));

  beforeAll(async () => {
    // Two instances of one deployment: the same PostgreSQL database and the same Redis.
    db = await createTestDatabase('postgres');
    // A command timeout far above what a busy machine takes: past it an instance counts in memory
    // (the outage behaviour, tested on its own), and these tests are about the shared count.
    for (let i = 0; i < 2; i++) {
      const app = await startTestApp(db, {
        clock,
        env: { REDIS_URL: redisUrl()!, RATE_LIMIT_PREFIX: prefix, REDIS_COMMAND_TIMEOUT_MS: '10000' },
      });
      await app.listen(0, '127.0.0.1');
      apps.push(app);
      urls.push(await app.getUrl());
    }
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await db?.drop();
    await dropRedisKeys(prefix);
  });

  it('alternating between instances: 60 succeed in total, then 429 on both', async () => {
    const key = await issueApiKey(apps[0], { plan: 'free' });
    const statuses: number[][] = [[], []];
    for (let i = 0; i < 70; i++) {
      const res = await request(urls[i % 2])
        .get('/v1/pets')
        .set('Authorization', `Bearer ${key}`);
      statuses[i % 2].push(res.status);
      expect(limits(res).remaining).toBe(Math.max(0, 59 - i));
    }
    expect(statuses[0]).toEqual([...Array(30).fill(200), ...Array(5).fill(429)]);
    expect(statuses[1]).toEqual([...Array(30).fill(200), ...Array(5).fill(429)]);
  });

  it('concurrently on both instances: exactly 60 of 200 succeed', async () => {
    clock.set('2027-02-01T12:05:10Z');
    const key = await issueApiKey(apps[1], { plan: 'free' });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        fetch(`${urls[i % 2]}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(60);
    // 140 refusals: the first 20 are rate_limit_exceeded until the minute ends, then the key
    // is banned (more than 20 refusals in one limited period).
    const bodies = await Promise.all(results.map(async (r) => (await r.json()) as { code?: string }));
    const refused = results.flatMap((r, i) =>
      r.status === 429 ? [[bodies[i].code, r.headers.get('retry-after')]] : [],
    );
    expect(refused).toHaveLength(140);
    expect(refused.filter(([code, after]) => code === 'rate_limit_exceeded' && after === '50')).toHaveLength(20);
    expect(refused.filter(([code, after]) => code === 'api_key_temporarily_banned' && after === '900')).toHaveLength(
      120,
    );
  });
});

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const describeWithRedisServer = describeIf(
  hasRedisServer(),
  'redis-server is not installed: the Redis outage suite does not run (apt-get install redis-server)',
);

describeWithRedisServer('when Redis stops and comes back', () => {
  let redis: OwnRedis;
  let db: TestDatabase;
  let app: NestExpressApplication;
  let admin: Redis;
  const prefix = redisPrefix('rl:outage');
  const clock = new FakeClock(new Date('2027-03-01T12:00:10Z'));
  const warn = jest.spyOn(Logger.prototype, 'warn');
  const log = jest.spyOn(Logger.prototype, 'log');

  beforeAll(async () => {
    redis = await startOwnRedis();
    admin = redis.admin;
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, {
      clock,
      env: { REDIS_URL: redis.url, RATE_LIMIT_PREFIX: prefix, REDIS_COMMAND_TIMEOUT_MS: '300' },
    });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    await redis?.stop();
    warn.mockRestore();
    log.mockRestore();
  });

  /** The minute counter of the test's key as Redis holds it (null: not counted there). */
  async function countInRedis(): Promise<string | null> {
    await admin.connect().catch(() => undefined);
    const keys = await admin.keys(`${prefix}{key:*}:w:minute`);
    return keys.length === 1 ? admin.hget(keys[0], 'c') : null;
  }

  it('keeps answering from memory without delay, logs once, and returns to Redis', async () => {
    const key = await issueApiKey(app, { plan: 'free' });
    const get = () => request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key}`);
    for (let i = 1; i <= 5; i++) expect(limits(await get()).remaining).toBe(60 - i);
    expect(await countInRedis()).toBe('5');
    admin.disconnect();

    warn.mockClear();
    await redis.stop();
    // Without delay: once the client has seen its connection go, a request is decided in memory
    // without sending Redis a command, so none waits for REDIS_COMMAND_TIMEOUT_MS (only one
    // sent before it noticed may).
    const scripts = [jest.spyOn(Redis.prototype, 'evalsha'), jest.spyOn(Redis.prototype, 'eval')];
    try {
      for (let i = 1; i <= 10; i++) {
        const res = await get();
        expect(res.status).toBe(200);
        expectOnlyContractHeaders(res);
        expect(limits(res).remaining).toBe(60 - i); // this instance's own count, from zero
      }
      expect(scripts[0].mock.calls.length + scripts[1].mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      for (const spy of scripts) spy.mockRestore();
    }
    const outageWarnings = warn.mock.calls.filter(([m]) => /Redis unavailable/.test(String(m)));
    expect(outageWarnings).toHaveLength(1);

    log.mockClear();
    redis = await startOwnRedis([], { port: redis.port });
    admin = redis.admin;
    // ioredis reconnects by itself (at most 2 s between attempts); the restarted server has
    // neither the counters nor the script (EVALSHA → NOSCRIPT → EVAL, or loaded on ready).
    const statuses: number[] = [];
    await waitFor(
      async () => {
        statuses.push((await get()).status);
        return (await countInRedis()) !== null;
      },
      // A request a check: not so often that this instance's own count reaches the limit meanwhile.
      { what: 'requests to be counted in the restarted Redis again', intervalMs: 100 },
    );
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(await countInRedis()).toBe('1');
    expect(log.mock.calls.filter(([m]) => /Redis answers again/.test(String(m)))).toHaveLength(1);

    // A flushed script cache is answered with EVAL, still in Redis.
    await admin.script('FLUSH');
    expect((await get()).status).toBe(200);
    expect(await countInRedis()).toBe('2');
  });
});
