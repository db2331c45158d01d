import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { LEASE_MS } from '../../src/rate-limit/redis-leases.js';
import { QUOTA_READS_PER_MINUTE } from '../../src/rate-limit/quota-reads.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { issueApiKey } from '../support/api-keys.js';
import { createTestDatabase, databaseKinds, TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { dropRedisKeys, redisPrefix, redisUrl } from '../support/redis-env.js';

// Starting an app on a fresh database takes seconds, more on a busy machine.
jest.setTimeout(120_000);

interface Window {
  limit: number;
  remaining: number;
  reset: number;
}
interface Quota {
  plan: string;
  limits: { minute: Window; day: Window };
  banned: null | { until: number };
}

/** The X-RateLimit-* triple of an answer, as numbers. */
function triple(res: request.Response): Window {
  return {
    limit: Number(res.headers['x-ratelimit-limit']),
    remaining: Number(res.headers['x-ratelimit-remaining']),
    reset: Number(res.headers['x-ratelimit-reset']),
  };
}

/** Every store the counters can live in here: memory always, Redis (with its leases) when REDIS_URL is set. */
const stores = redisUrl() === undefined ? (['memory'] as const) : (['memory', 'redis'] as const);
const cases = databaseKinds().flatMap((db) => stores.map((store) => [db, store] as const));

describe.each(cases)('GET /v1/rate_limit on %s with %s counters', (kind, store) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  const prefix = redisPrefix('rate-limit-read');
  const clock = new FakeClock(new Date('2026-11-22T12:00:05Z'));
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    const env: Record<string, string> =
      store === 'redis' ? { REDIS_URL: redisUrl() as string, RATE_LIMIT_PREFIX: prefix } : {};
    app = await startTestApp(db, { clock, env });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    await dropRedisKeys(prefix);
  });

  const read = async (key: string): Promise<{ res: request.Response; quota: Quota }> => {
    const res = await http().get('/v1/rate_limit').set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    return { res, quota: res.body as Quota };
  };
  const counted = (key: string) => http().get('/v1/pets?limit=1').set('Authorization', `Bearer ${key}`);

  /**
   * The quota as read, then the next counted request: its headers describe the minute window
   * (the pro plan's, closest to exhaustion), which it spends one of.
   */
  async function expectReadThenCounted(key: string): Promise<void> {
    const { quota } = await read(key);
    const res = await counted(key);
    expect(res.status).toBe(200);
    expect(triple(res)).toEqual({ ...quota.limits.minute, remaining: quota.limits.minute.remaining - 1 });
  }

  it("reads the key's plan, windows and no ban without spending them: 80 reads leave the remaining count as it was, and the next counted request agrees", async () => {
    const key = await issueApiKey(app, { plan: 'pro' });
    expect((await counted(key)).status).toBe(200);
    const first = await read(key);
    expect(first.quota).toEqual({
      plan: 'pro',
      limits: {
        minute: { limit: 300, remaining: 299, reset: Date.parse('2026-11-22T12:01:00Z') / 1000 },
        day: { limit: 10_000, remaining: 9_999, reset: Date.parse('2026-11-23T00:00:00Z') / 1000 },
      },
      banned: null,
    });
    // Its own headers describe the same window, as read.
    expect(triple(first.res)).toEqual(first.quota.limits.minute);
    expect(first.res.headers['cache-control']).toBe('no-store');
    for (let i = 0; i < 80; i++) expect((await read(key)).quota).toEqual(first.quota);
    const next = await counted(key);
    expect(triple(next)).toEqual({ limit: 300, remaining: 298, reset: first.quota.limits.minute.reset });
  });

  it('agrees with the next counted request through every state of a lease: held, spent, ended with counts unspent', async () => {
    const key = await issueApiKey(app, { plan: 'pro' });
    for (let round = 0; round < 6; round++) {
      await expectReadThenCounted(key);
      await expectReadThenCounted(key);
      // A lease ends LEASE_MS after it was granted, with what it did not spend given back next.
      clock.set(new Date(clock.now().getTime() + LEASE_MS + 1));
    }
    // Still in the minute it started: every counted request is in the window read.
    expect(clock.now().getTime()).toBeLessThan(Date.parse('2026-11-22T12:01:00Z'));
    clock.set('2026-11-22T12:00:05Z');
  });

  it(`keeps a flood of reads bounded: ${QUOTA_READS_PER_MINUTE} a minute per key, then 429 until the minute ends, and still nothing counted`, async () => {
    clock.set('2026-11-22T13:00:05Z');
    const key = await issueApiKey(app, { plan: 'pro' });
    const { quota } = await read(key);
    for (let i = 1; i < QUOTA_READS_PER_MINUTE; i++) await read(key);
    const refused = await http().get('/v1/rate_limit').set('Authorization', `Bearer ${key}`);
    expectErrorBody(refused, 429, 'rate_limit_exceeded', /reads of this API key's rate limits/);
    expect(refused.headers['retry-after']).toBe('55');
    expect(triple(await counted(key))).toEqual({
      ...quota.limits.minute,
      remaining: quota.limits.minute.remaining - 1,
    });
    clock.set('2026-11-22T13:01:00Z');
    expect((await read(key)).quota.limits.minute.remaining).toBe(300);
    clock.set('2026-11-22T12:00:05Z');
  });

  it('reports a ban, ending when the banned answers say the next request can succeed', async () => {
    clock.set('2026-11-22T14:00:05Z');
    const key = await issueApiKey(app, { plan: 'free' });
    let last: request.Response | undefined;
    for (let i = 0; i < 82; i++) last = await counted(key);
    expectErrorBody(last!, 429, 'api_key_temporarily_banned');
    const { quota } = await read(key);
    expect(quota.plan).toBe('free');
    expect(quota.limits.minute).toEqual({ limit: 60, remaining: 0, reset: Date.parse('2026-11-22T14:01:00Z') / 1000 });
    expect(quota.banned).toEqual({ until: Number(last!.headers['x-ratelimit-reset']) });
    clock.set('2026-11-22T12:00:05Z');
  });

  it('needs a valid key, counted against the address like any request without one', async () => {
    const missing = await http().get('/v1/rate_limit');
    expectErrorBody(missing, 401, 'missing_api_key');
    expect(missing.headers['x-ratelimit-limit']).toBe('60');
    expectErrorBody(
      await http().get('/v1/rate_limit').set('Authorization', 'Bearer ask_not-a-key'),
      401,
      'invalid_api_key',
    );
    const key = await issueApiKey(app);
    expectErrorBody(
      await http().get('/v1/rate_limit?verbose=1').set('Authorization', `Bearer ${key}`),
      400,
      'unknown_parameter',
    );
  });
});
