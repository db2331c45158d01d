import type { NestExpressApplication } from '@nestjs/platform-express';
import pg from 'pg';
import request from 'supertest';
import { PrismaService } from '../../src/database/prisma.service.js';
import { issueApiKey } from '../support/api-keys.js';
import { AppBehindProxy, startAppBehindProxy } from '../support/app-behind-proxy.js';
import { describeIfPostgres } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { redisEnv } from '../support/redis-env.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Database faults under concurrent traffic (PostgreSQL only: the embedded database lives in the
 * process). Connections are killed with pg_terminate_backend, or the server becomes unreachable
 * (a TCP proxy in front of it is cut). Every answer is a success or 503 service_unavailable with
 * Retry-After, never a 500 or a hang; readiness turns 503; the service recovers by itself; and
 * nothing is half-written (a pet created with an Idempotency-Key always has its record).
 */
/** No request may take longer than this, whatever happens to the database. */
const REQUEST_DEADLINE_MS = 15_000;

interface Outcome {
  status: number;
  body: { code?: string; status?: number; message?: string };
  retryAfter?: string;
  what: string;
}

describeIfPostgres('database faults under traffic (PostgreSQL)', () => {
  let setup: AppBehindProxy;
  let app: NestExpressApplication;
  let proxy: TcpProxy;
  let key: string;
  let dbName: string;
  let admin: pg.Client;
  let seq = 0;
  const redis = redisEnv('faults');

  beforeAll(async () => {
    setup = await startAppBehindProxy({
      env: {
        DB_CONNECT_TIMEOUT_MS: '1000',
        DB_STATEMENT_TIMEOUT_MS: '2000',
        DB_POOL_MAX: '5',
        // Every request checks its key in the database, so every request meets the fault.
        API_KEY_CACHE_TTL_MS: '0',
        // FAULTS_LOG=error shows what the service logged for an unexpected answer.
        LOG_LEVEL: process.env.FAULTS_LOG ?? 'silent',
        ...redis.env,
      },
    });
    ({ app, proxy } = setup);
    dbName = new URL(setup.db.env.DATABASE_URL).pathname.slice(1);
    key = await issueApiKey(app);
    admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.end();
    await proxy?.stop(); // first: whatever still waits on the database fails now
    await setup?.close();
    await redis.cleanup();
  }, 60_000);

  const http = () => request(app.getHttpServer());
  const auth = (r: request.Test) => r.set('Authorization', `Bearer ${key}`).timeout(REQUEST_DEADLINE_MS);

  /** One request of the mix: list, get, create, create with an Idempotency-Key, readiness. */
  async function one(i: number): Promise<Outcome> {
    const n = ++seq;
    let what: string;
    let req: request.Test;
    switch (i % 5) {
      case 0:
        what = 'GET /v1/pets';
        req = auth(http().get('/v1/pets?limit=5'));
        break;
      case 1:
        what = 'GET /v1/pets/1';
        req = auth(http().get('/v1/pets/1'));
        break;
      case 2:
        what = 'POST /v1/pets';
        req = auth(http().post('/v1/pets'))
          .set('Content-Type', 'application/json')
          .send(`{"name":"plain-${n}","categoryId":1}`);
        break;
      case 3:
        what = 'POST /v1/pets (Idempotency-Key)';
        req = auth(http().post('/v1/pets'))
          .set('Content-Type', 'application/json')
          .set('Idempotency-Key', `fault-${n}`)
          .send(`{"name":"idem-${n}","categoryId":2}`);
        break;
      default:
        what = 'GET /readyz';
        req = http().get('/readyz').timeout(REQUEST_DEADLINE_MS);
    }
    const res = await req;
    return {
      status: res.status,
      body: res.body as Outcome['body'],
      retryAfter: res.headers['retry-after'] as string | undefined,
      what,
    };
  }

  /** Runs `workers` loops of requests until `until` resolves; collects every outcome in `outcomes`, as it comes. */
  async function traffic(workers: number, until: Promise<void>, outcomes: Outcome[] = []): Promise<Outcome[]> {
    let running = true;
    void until.then(() => (running = false));
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        for (let i = w; running; i += workers) outcomes.push(await one(i));
      }),
    );
    return outcomes;
  }

  function expectOnlySuccessOr503(outcomes: Outcome[]): void {
    const bad = outcomes.filter((o) => {
      if (o.status >= 200 && o.status < 300) return false;
      if (o.status === 404 && o.what === 'GET /v1/pets/1') return false;
      return !(
        o.status === 503 &&
        o.body.code === 'service_unavailable' &&
        o.body.status === 503 &&
        Number(o.retryAfter) >= 1
      );
    });
    expect(bad).toEqual([]);
  }

  async function terminateBackends(): Promise<number> {
    const r = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [dbName],
    );
    return r.rowCount ?? 0;
  }

  async function recovers(): Promise<void> {
    await waitFor(
      async () =>
        (await auth(http().get('/v1/pets?limit=1'))).status === 200 && (await http().get('/readyz')).status === 200,
      { what: 'GET /v1/pets and /readyz to answer 200 again', intervalMs: 200 },
    );
    const created = await auth(http().post('/v1/pets'))
      .set('Content-Type', 'application/json')
      .send('{"name":"after","categoryId":3}');
    expect(created.status).toBe(201);
  }

  /** A pet created with an Idempotency-Key and its completed record exist together, or neither. */
  async function expectNothingHalfWritten(): Promise<void> {
    const prisma = app.get(PrismaService);
    const pets = await prisma.pet.findMany({
      where: { name: { startsWith: 'idem-' } },
      select: { id: true, name: true },
    });
    const keys = await prisma.idempotencyKey.findMany({ where: { key: { startsWith: 'fault-' } } });
    const completed = new Map(keys.filter((k) => k.state === 'completed').map((k) => [k.key, k]));
    for (const pet of pets) {
      const record = completed.get(`fault-${pet.name.slice('idem-'.length)}`);
      expect(record).toBeDefined();
      expect(record!.responseBody).toContain(`"id":${pet.id}`);
    }
    expect(completed.size).toBe(pets.length);
  }

  it('answers 503 (never 500, never a hang) while connections are killed, and recovers by itself', async () => {
    const outcomes: Outcome[] = [];
    const kills = (async () => {
      let killed = 0;
      for (let round = 0; round < 25; round++) {
        // Between two kills traffic goes on, and some of it gets through.
        const answered = outcomes.length;
        await waitFor(
          () =>
            outcomes.length >= answered + 3 && outcomes.slice(answered).some((o) => o.status >= 200 && o.status < 300),
          {
            what: `a success among three answers or more after kill ${round}`,
          },
        );
        killed += await terminateBackends();
      }
      expect(killed).toBeGreaterThan(0);
    })();
    await traffic(
      12,
      kills.catch(() => {}),
      outcomes,
    );
    await kills;

    expectOnlySuccessOr503(outcomes);
    expect(outcomes.length).toBeGreaterThan(50);
    // Both happened: requests succeeded between the kills, and some met a killed connection.
    expect(outcomes.some((o) => o.status === 503)).toBe(true);
    expect(outcomes.some((o) => o.status === 201)).toBe(true);
    await recovers();
    await expectNothingHalfWritten();
  }, 90_000);

  it('answers 503 while the server is unreachable, turns readiness 503, and recovers when it returns', async () => {
    let cut!: () => void;
    const stop = new Promise<void>((r) => (cut = r));
    const outcomes: Outcome[] = [];
    const during = traffic(8, stop, outcomes);
    try {
      await waitFor(() => outcomes.some((o) => o.status === 200), { what: 'traffic to be served before the cut' });
      await proxy.stop(); // resets every open connection and refuses new ones
      // Readiness reuses an outcome for READINESS_CACHE_MS: the one it computes after the cut.
      const ready = await waitFor(
        async () =>
          ((res) => (res.status === 200 ? undefined : res))(await http().get('/readyz').timeout(REQUEST_DEADLINE_MS)),
        { what: '/readyz to notice the database is gone' },
      );
      expect(expectErrorBody(ready, 503, 'service_unavailable').details).toBeUndefined();
      expect(Number(ready.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const list = await auth(http().get('/v1/pets'));
      expect(list.status).toBe(503);
      expect(list.text).not.toMatch(/ECONN|prisma|SELECT|pg_/i);
      // The traffic met the outage too.
      await waitFor(() => outcomes.some((o) => o.status === 503), { what: 'the traffic to be answered 503' });
    } finally {
      cut();
    }
    await during;
    await proxy.start();

    expectOnlySuccessOr503(outcomes);
    expect(outcomes.filter((o) => o.status === 503).length).toBeGreaterThan(0);
    await recovers();
    await expectNothingHalfWritten();
  }, 90_000);

  it('answers 503 within a bound when the network drops every packet (no reset), and recovers', async () => {
    let cut!: () => void;
    const stop = new Promise<void>((r) => (cut = r));
    const outcomes: Outcome[] = [];
    const during = traffic(8, stop, outcomes);
    try {
      // Established connections first (as many successes as the pool has connections), so some
      // go silent mid-use and some while idle in the pool.
      await waitFor(() => outcomes.filter((o) => o.status === 200 || o.status === 201).length >= 5, {
        what: 'traffic to be served before the partition',
      });
      proxy.freeze(); // open connections go silent, new ones are never answered
      // The bound is the client's query and connect timeouts (DB_STATEMENT_TIMEOUT_MS + 1 s,
      // DB_CONNECT_TIMEOUT_MS), not a clock of this test's: every request carries
      // .timeout(REQUEST_DEADLINE_MS), so one that hung would fail the test.
      await waitFor(() => outcomes.some((o) => o.status === 503), { what: 'the traffic to be answered 503' });
      const list = await auth(http().get('/v1/pets'));
      expect(list.status).toBe(503);
      await waitFor(async () => (await http().get('/readyz').timeout(REQUEST_DEADLINE_MS)).status === 503, {
        what: '/readyz to notice the partition',
      });
    } finally {
      cut();
    }
    await during; // every request answered: none outlived REQUEST_DEADLINE_MS
    await proxy.stop();
    await proxy.start();

    expectOnlySuccessOr503(outcomes);
    await recovers();
    await expectNothingHalfWritten();
  }, 90_000);
});
