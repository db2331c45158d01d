import pg from 'pg';
import { issueApiKeyIn } from '../support/api-keys.js';
import { buildService, RunningService, startService } from '../support/built-service.js';
import { runKeyTool } from '../support/key-tool.js';
import { createTestDatabase, describeEachDatabase, describeIfPostgres, TestDatabase } from '../support/databases.js';
import { sample } from '../support/metrics-text.js';
import { redisEnv, redisUrl } from '../support/redis-env.js';
import { waitFor } from '../support/wait-for.js';

/**
 * Usage per key across processes of the built service: each instance counts in memory and
 * writes in batches, on SIGTERM too, so the table holds every request answered before a
 * graceful stop, however many instances served them; a SIGKILL loses only what the killed
 * instance counted since its last write. Read back with the key tool, as an operator does.
 */

jest.setTimeout(180_000);
const START_TIMEOUT_MS = 90_000;

beforeAll(() => {
  buildService();
}, 180_000);

interface Period {
  period: string;
  requests: number;
  limited: number;
}

/** `npm run apikey -- …` as a user runs it (the built `cli/apikey.js`). */
const tool = runKeyTool;

/** The key's usage over the day range around now, by hour, read with `apikey usage --json`. */
async function usageOf(env: Record<string, string>, id: string): Promise<Period[]> {
  const day = 86_400_000;
  const from = new Date(Date.now() - day).toISOString();
  const to = new Date(Date.now() + day).toISOString();
  const run = await tool(['usage', id, '--from', from, '--to', to, '--json'], env);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  return JSON.parse(run.stdout) as Period[];
}

const total = (periods: Period[]) => ({
  requests: periods.reduce((n, p) => n + p.requests, 0),
  limited: periods.reduce((n, p) => n + p.limited, 0),
});

/** `n` GET /v1/pets with the key, one after another; the statuses answered (a 429 with its Error body). */
async function send(svc: RunningService, key: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${svc.url}/v1/pets?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { code?: string };
    if (res.status === 429) expect(body.code).toMatch(/^(rate_limit_exceeded|api_key_temporarily_banned)$/);
    else expect(res.status).toBe(200);
    statuses.push(res.status);
  }
  return statuses;
}

const count429 = (statuses: number[]) => statuses.filter((s) => s === 429).length;

async function metric(svc: RunningService, name: string): Promise<number | undefined> {
  return sample(await (await fetch(`${svc.url}/metrics`)).text(), name, {});
}

describeIfPostgres('usage per key across two instances on PostgreSQL and Redis', () => {
  let db: TestDatabase;
  const redis = redisEnv('usage');
  const running: RunningService[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });

  afterAll(async () => {
    for (const svc of running) await svc.stop('SIGKILL').catch(() => undefined);
    await redis.cleanup();
    await db?.drop();
  });

  async function start(env: Record<string, string>): Promise<RunningService> {
    const svc = await startService({ ...db.env, ...redis.env, LOG_LEVEL: 'warn', ...env }, START_TIMEOUT_MS);
    running.push(svc);
    return svc;
  }

  it('holds every request answered before a graceful stop of both, and of one restarted, 429s in limited', async () => {
    const key = await issueApiKeyIn(db);
    // Two requests a minute: shared through Redis, so the instances together refuse the rest.
    const small = await issueApiKeyIn(db, { plan: 'enterprise', perMinute: 2, perDay: 1000 });
    // One instance writes every 100 ms, the other only when it stops (its interval is 10 minutes).
    const a = await start({ USAGE_FLUSH_MS: '100' });
    const b = await start({ USAGE_FLUSH_MS: '600000' });

    const statuses = [...(await send(a, key.key, 25)), ...(await send(b, key.key, 17)), ...(await send(a, key.key, 3))];
    expect(count429(statuses)).toBe(0);
    const small429 = [...(await send(a, small.key, 3)), ...(await send(b, small.key, 3))];
    // However the six fall into UTC minutes, at least two are over the limit of two a minute.
    if (redisUrl() !== undefined) expect(count429(small429)).toBeGreaterThanOrEqual(2);

    expect(await a.stop('SIGTERM')).toBe(0);
    expect(await b.stop('SIGTERM')).toBe(0);
    expect(total(await usageOf(db.env, key.id))).toEqual({ requests: 45, limited: 0 });
    expect(total(await usageOf(db.env, small.id))).toEqual({ requests: 6, limited: count429(small429) });

    const again = await start({ USAGE_FLUSH_MS: '600000' });
    expect(count429(await send(again, key.key, 11))).toBe(0);
    expect(await again.stop('SIGTERM')).toBe(0);

    const periods = await usageOf(db.env, key.id);
    expect(total(periods)).toEqual({ requests: 56, limited: 0 });
    for (const p of periods) expect(p.period).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z$/);
  });

  it('loses on SIGKILL only what the killed instance counted since its last write; the other instance loses nothing', async () => {
    const key = await issueApiKeyIn(db);
    const pool = new pg.Pool({ connectionString: db.env.DATABASE_URL, max: 1 });
    const written = async () =>
      Number(
        (
          await pool.query<{ n: string }>('SELECT coalesce(sum(requests), 0) AS n FROM key_usage WHERE key_id = $1', [
            key.id,
          ])
        ).rows[0].n,
      );
    try {
      const killed = await start({ USAGE_FLUSH_MS: '100' });
      const graceful = await start({ USAGE_FLUSH_MS: '600000' });
      await send(graceful, key.key, 9);
      await send(killed, key.key, 20);
      // Those 20 have been written once the instance's own counter says so.
      await waitFor(async () => (await metric(killed, 'usage_flush_requests_total')) === 20, {
        what: 'the first 20 requests to be written',
      });
      expect(await written()).toBe(20);
      await send(killed, key.key, 15);
      await killed.stop('SIGKILL');
      const afterKill = await written();
      // Everything written before stays; of the 15 counted since, some may have been written by a
      // flush before the kill, none twice.
      expect(afterKill).toBeGreaterThanOrEqual(20);
      expect(afterKill).toBeLessThanOrEqual(35);
      expect(await graceful.stop('SIGTERM')).toBe(0);
      expect(await written()).toBe(afterKill + 9);
    } finally {
      await pool.end();
    }
  });
});

describeEachDatabase('usage per key of one instance stopped with SIGTERM, on %s', (kind) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('writes what it counted when it stops, and the key tool shows it by hour and by day', async () => {
    const key = await issueApiKeyIn(db, { plan: 'enterprise', perMinute: 4, perDay: 1000 });
    const svc = await startService({ ...db.env, LOG_LEVEL: 'warn', USAGE_FLUSH_MS: '600000' }, START_TIMEOUT_MS);
    let statuses: number[];
    try {
      statuses = await send(svc, key.key, 7);
      expect(await metric(svc, 'usage_flush_requests_total')).toBe(0);
    } finally {
      expect(await svc.stop('SIGTERM')).toBe(0);
    }
    const periods = await usageOf(db.env, key.id);
    expect(total(periods)).toEqual({ requests: 7, limited: count429(statuses) });
    expect(count429(statuses)).toBeGreaterThanOrEqual(2);

    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const text = await tool(['usage', key.id, '--from', today, '--to', tomorrow, '--granularity', 'day'], db.env);
    expect(text.code).toBe(0);

    const unknown = await tool(['usage', '999999', '--from', today, '--to', tomorrow], db.env);
    expect({ code: unknown.code, stdout: unknown.stdout, stderr: unknown.stderr }).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringContaining('apikey: no API key has id 999999\n') as unknown,
    });
    const bad = await tool(['usage', key.id, '--from', 'yesterday', '--to', tomorrow], db.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^apikey: --from: from must be an ISO-8601 date or instant .*"yesterday"\n\nUsage:/);
    // Seven requests may straddle midnight: one or two days, summing to seven.
    expect(text.stdout).toMatch(
      new RegExp(
        `^DAY +REQUESTS +LIMITED\n(\\S+T00:00:00\\.000Z +\\d+ +\\d+\n){1,2}API key ${key.id} from ${today}T00:00:00\\.000Z to ${tomorrow}T00:00:00\\.000Z: 7 requests, ${count429(statuses)} of them answered 429\\.\n$`,
      ),
    );
  });
});
