import { TEST_ACTOR } from '../support/api-keys.js';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { KeyUsageRepository, PURGE_BATCH } from '../../src/usage/key-usage.repository.js';
import { UsageRecorder } from '../../src/usage/usage-recorder.js';
import { parseUsageQuery } from '../../src/usage/usage-query.js';
import { UsageService } from '../../src/usage/usage.service.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { createTestDatabase, describeEachDatabase, describeIfPostgres, TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { sample } from '../support/metrics-text.js';
import { AppBehindProxy, startAppBehindProxy } from '../support/app-behind-proxy.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Usage per key and hour, in the real app on each database: every request counted against a key
 * is written to key_usage by the flush (here called by the test; its timer is set far off),
 * 429s counted in `limited`, read back by hour and by day; old hours purged in batches.
 */
describeEachDatabase('usage per key on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  const clock = new FakeClock(new Date('2026-11-27T06:30:00Z'));

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { clock, env: { USAGE_FLUSH_MS: '600000', USAGE_RETENTION_DAYS: '30' } });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const recorder = () => app.get(UsageRecorder);
  const usage = (id: bigint, from: string, to: string, granularity = 'hour') =>
    app.get(UsageService).usage(id, parseUsageQuery({ from, to, granularity }));

  async function newKey(perMinute = 1_000_000): Promise<{ id: bigint; key: string }> {
    const { info, key } = await app
      .get(ApiKeysService)
      .create({ name: 'usage', plan: 'enterprise', perMinute, perDay: 2 * perMinute }, TEST_ACTOR);
    return { id: info.id, key };
  }

  const list = (key: string) => request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key}`);

  it('counts each request against its key and UTC hour, written by one flush, read by hour and by day', async () => {
    clock.set('2026-11-27T06:30:00Z');
    const a = await newKey();
    const b = await newKey();
    for (let i = 0; i < 3; i++) expect((await list(a.key)).status).toBe(200);
    expect((await list(b.key)).status).toBe(200);
    // Refused without a valid key: counted against the address, in no key's usage.
    expectErrorBody(await request(app.getHttpServer()).get('/v1/pets'), 401, 'missing_api_key');
    clock.set('2026-11-27T07:05:00Z');
    for (let i = 0; i < 2; i++) expect((await list(a.key)).status).toBe(200);

    expect(await usage(a.id, '2026-11-27', '2026-11-28')).toEqual([]); // nothing written yet
    expect(await recorder().flush()).toBe(true);

    expect(await usage(a.id, '2026-11-27T00:00:00Z', '2026-11-28T00:00:00Z')).toEqual([
      { period: '2026-11-27T06:00:00.000Z', requests: 3, limited: 0 },
      { period: '2026-11-27T07:00:00.000Z', requests: 2, limited: 0 },
    ]);
    expect(await usage(b.id, '2026-11-27', '2026-11-28')).toEqual([
      { period: '2026-11-27T06:00:00.000Z', requests: 1, limited: 0 },
    ]);
    expect(await usage(a.id, '2026-11-01', '2026-12-01', 'day')).toEqual([
      { period: '2026-11-27T00:00:00.000Z', requests: 5, limited: 0 },
    ]);
    // A range inside an hour answers that whole hour.
    expect(await usage(a.id, '2026-11-27T07:10:00Z', '2026-11-27T07:20:00Z')).toEqual([
      { period: '2026-11-27T07:00:00.000Z', requests: 2, limited: 0 },
    ]);

    // A second flush adds to the rows already written.
    expect((await list(a.key)).status).toBe(200);
    expect(await recorder().flush()).toBe(true);
    expect(await usage(a.id, '2026-11-27T07:00:00Z', '2026-11-27T08:00:00Z')).toEqual([
      { period: '2026-11-27T07:00:00.000Z', requests: 3, limited: 0 },
    ]);
    const metrics = await app.get(MetricsService).render();
    expect(sample(metrics, 'usage_flush_requests_total', {})).toBe(7);
    expect(sample(metrics, 'usage_flush_rows_total', {})).toBe(4);
    expect(sample(metrics, 'usage_flush_failures_total', {})).toBe(0);
    expect(sample(metrics, 'usage_flush_lag_seconds', {})).toBe(0);
  });

  it('counts the requests refused 429 in limited', async () => {
    clock.set('2026-11-27T09:00:10Z');
    const { id, key } = await newKey(2);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await list(key));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 429, 429, 429]);
    expectErrorBody(answers[2], 429, 'rate_limit_exceeded');
    await recorder().flush();
    expect(await usage(id, '2026-11-27T09:00:00Z', '2026-11-27T10:00:00Z')).toEqual([
      { period: '2026-11-27T09:00:00.000Z', requests: 5, limited: 3 },
    ]);
  });

  it('adds batches that share rows, written at once in opposite orders, without a deadlock and exactly', async () => {
    const repository = app.get(KeyUsageRepository);
    const hour = Date.UTC(2026, 10, 27, 12);
    const rows = Array.from({ length: 300 }, (_, i) => ({
      keyId: String(1000 + i),
      hour,
      operation: 'listPets' as const,
      requests: 1,
      limited: 0,
    }));
    await repository.add(rows);
    for (let round = 0; round < 5; round++) {
      await Promise.all([repository.add(rows), repository.add([...rows].reverse())]);
    }
    const written = await app.get(PrismaService).keyUsage.findMany({ where: { hour: new Date(hour) } });
    expect(written).toHaveLength(300);
    expect(written.every((r) => r.requests === 11n)).toBe(true);
  });

  it('keeps the counts of a write that fails, with readiness unchanged, and writes them once it can', async () => {
    clock.set('2026-11-27T10:15:00Z');
    const prisma = app.get(PrismaService);
    const { id, key } = await newKey();
    for (let i = 0; i < 2; i++) expect((await list(key)).status).toBe(200);
    expect(await recorder().flush()).toBe(true);
    expect(recorder().lagSeconds()).toBe(0);
    expect((await list(key)).status).toBe(200);
    await prisma.$executeRawUnsafe('ALTER TABLE "key_usage" RENAME TO "key_usage_away"');
    try {
      expect(await recorder().flush()).toBe(false);
      clock.set('2026-11-27T10:15:30Z');
      expect((await list(key)).status).toBe(200);
      expect(await recorder().flush()).toBe(false);
      expect(recorder().lagSeconds()).toBe(30);
      const ready = await request(app.getHttpServer()).get('/readyz');
      expect({ status: ready.status, body: ready.body as unknown }).toEqual({
        status: 200,
        body: expect.objectContaining({ status: 'ok' }) as unknown,
      });
    } finally {
      await prisma.$executeRawUnsafe('ALTER TABLE "key_usage_away" RENAME TO "key_usage"');
    }
    expect(await recorder().flush()).toBe(true);
    expect(await usage(id, '2026-11-27T10:00:00Z', '2026-11-27T11:00:00Z')).toEqual([
      { period: '2026-11-27T10:00:00.000Z', requests: 4, limited: 0 },
    ]);
    expect(recorder().lagSeconds()).toBe(0);
  });

  it('reads null for a key that does not exist', async () => {
    expect(await usage(987654321n, '2026-11-27', '2026-11-28')).toBeNull();
  });

  it(`deletes hours older than USAGE_RETENTION_DAYS in batches of ${PURGE_BATCH} and keeps the newer ones`, async () => {
    const prisma = app.get(PrismaService);
    await prisma.keyUsage.deleteMany({});
    const now = clock.now();
    const old = PURGE_BATCH * 2 + 5;
    // `old` hours that began more than 30 days ago, and 10 within them.
    await prisma.$executeRaw`
      INSERT INTO "key_usage" ("key_id", "hour", "operation", "requests", "limited")
      SELECT 1, ${now}::timestamptz - interval '31 days' - n * interval '1 hour', 'listPets', 1, 0 FROM generate_series(1, ${old}) AS n
      UNION ALL
      SELECT 1, ${now}::timestamptz - interval '29 days' + n * interval '1 hour', 'listPets', 1, 0 FROM generate_series(1, 10) AS n`;
    expect(await recorder().purgeExpired()).toBe(old);
    expect(await prisma.keyUsage.count()).toBe(10);
    expect(await recorder().purgeExpired()).toBe(0);
  }, 60_000);
});

/**
 * While PostgreSQL cannot be reached a usage write fails: the instance keeps the counts (adding
 * what comes in meanwhile), counts the failure, and writes them all once the database is back.
 */
describeIfPostgres('usage writes while PostgreSQL is unreachable', () => {
  let setup: AppBehindProxy;
  let app: NestExpressApplication;
  let proxy: TcpProxy;

  beforeAll(async () => {
    setup = await startAppBehindProxy({ env: { USAGE_FLUSH_MS: '600000' } });
    ({ app, proxy } = setup);
  });

  afterAll(async () => {
    await setup?.close();
  });

  it('keeps the counts of a failed write and writes them, with those counted since, once the database answers', async () => {
    const { info, key } = await app
      .get(ApiKeysService)
      .create({ name: 'outage', plan: 'enterprise', perMinute: 1_000_000, perDay: 2_000_000 }, TEST_ACTOR);
    const list = () => request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key}`);
    for (let i = 0; i < 3; i++) expect((await list()).status).toBe(200);

    await proxy.stop();
    expect(await app.get(UsageRecorder).flush()).toBe(false);
    expect(await app.get(UsageRecorder).flush()).toBe(false);
    const metrics = await app.get(MetricsService).render();
    expect(sample(metrics, 'usage_flush_failures_total', {})).toBe(2);
    expect(sample(metrics, 'usage_flush_requests_total', {})).toBe(0);

    await proxy.start();
    // Requests counted against the key carry its limit (a request the key could not be checked
    // for is counted against the address, at the free plan's 60).
    let againstKey = 0;
    await waitFor(
      async () => {
        const res = await list();
        if (res.headers['x-ratelimit-limit'] === '1000000') againstKey++;
        return res.status === 200;
      },
      { what: 'GET /v1/pets to answer 200 again' },
    );
    await waitFor(() => app.get(UsageRecorder).flush(), { what: 'a usage write to succeed' });
    const written = await app.get(PrismaService).keyUsage.findMany({ where: { keyId: info.id } });
    expect(againstKey).toBeGreaterThanOrEqual(1);
    expect(written.reduce((n, r) => n + Number(r.requests), 0)).toBe(3 + againstKey);
    expect(sample(await app.get(MetricsService).render(), 'usage_flush_requests_total', {})).toBe(3 + againstKey);
  });
});
