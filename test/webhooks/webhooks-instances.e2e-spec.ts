import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { WebhooksService } from '../../src/webhooks/webhooks.service.js';
import { startTestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { buildService, startService, type RunningService } from '../support/built-service.js';
import { createTestDatabase, describeIfPostgres, type TestDatabase } from '../support/databases.js';
import { KEY_TOOL_CHECKSUM_SECRET, keyToolJson } from '../support/key-tool.js';
import { redisEnv } from '../support/redis-env.js';
import { waitFor } from '../support/wait-for.js';
import { Receiver } from './receiver.js';

/**
 * Two processes of the built service on one PostgreSQL (and one Redis when REDIS_URL is set),
 * both with their delivery queue running: each event is delivered once, whichever instance
 * takes its attempt, and a quota threshold both instances see is announced once.
 */

jest.setTimeout(180_000);
const START_TIMEOUT_MS = 90_000;

beforeAll(() => {
  buildService();
}, 180_000);

describeIfPostgres('webhooks of two instances (PostgreSQL)', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  let secret: string;
  let key: { id: string; secret: string };
  const redis = redisEnv('webhooks-instances');
  const running: RunningService[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    receiver = await new Receiver().start();
    const app = await startTestApp(db);
    try {
      const { info, key: issued } = await app
        .get(ApiKeysService)
        .create({ name: 'metered', plan: 'enterprise', perMinute: 10, perDay: 10 }, TEST_ACTOR);
      key = { id: info.id.toString(), secret: issued };
      // Made before the instances start: each finds an enabled endpoint and starts its queue.
      ({ secret } = await app
        .get(WebhooksService)
        .create({ url: receiver.url, events: ['key.created', 'key.quota_threshold'] }, TEST_ACTOR));
    } finally {
      await app.close();
    }
  });

  afterAll(async () => {
    for (const svc of running) await svc.stop('SIGKILL').catch(() => undefined);
    await receiver?.stop();
    await redis.cleanup();
    await db?.drop();
  });

  async function start(): Promise<RunningService> {
    const svc = await startService({ ...db.env, ...redis.env, LOG_LEVEL: 'info' }, START_TIMEOUT_MS);
    running.push(svc);
    await waitFor(() => svc.output().includes('webhook delivery queue started'), {
      what: `the delivery queue of the instance on port ${svc.port}`,
    });
    return svc;
  }

  async function send(svc: RunningService, n: number): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${svc.url}/v1/pets?limit=1`, { headers: { Authorization: `Bearer ${key.secret}` } });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    return statuses;
  }

  it('each event is delivered once, one attempt each, and a threshold both instances see is announced once', async () => {
    const [a, b] = [await start(), await start()];
    // A key event, enqueued by the key tool: taken by one of the two queues.
    const created = await keyToolJson<{ id: number }>(['create', '--name', 'announced', '--plan', 'free'], {
      ...db.env,
      API_KEY_CHECKSUM_SECRET: KEY_TOOL_CHECKSUM_SECRET,
    });
    // The key's whole day through the first instance, then as much through the second, which
    // finds it spent (shared counters) or counts it afresh (memory): each sees both thresholds.
    expect(await send(a, 10)).toEqual(Array(10).fill(200));
    expect((await send(a, 1))[0]).toBe(429);
    await send(b, 10);
    await waitFor(() => receiver.received.length >= 3, { what: 'three events', timeoutMs: 60_000 });
    // Both stop gracefully, each flushing what it saw: nothing more is recorded or sent.
    expect(await Promise.all([a.stop('SIGTERM'), b.stop('SIGTERM')])).toEqual([0, 0]);

    const ids = receiver.received.map((r) => r.headers['webhook-id'] as string);
    expect(new Set(ids).size).toBe(ids.length);
    const events = receiver.received.map(
      (r) =>
        new Webhook(secret).verify(r.body, {
          'webhook-id': r.headers['webhook-id'] as string,
          'webhook-timestamp': r.headers['webhook-timestamp'] as string,
          'webhook-signature': r.headers['webhook-signature'] as string,
        }) as { type: string; data: Record<string, unknown> },
    );
    const described = events.map((e) =>
      e.type === 'key.created' ? `key.created ${String(e.data.keyId)}` : `${e.type} ${String(e.data.threshold)}`,
    );
    expect(described.sort()).toEqual([
      `key.created ${created.id}`,
      'key.quota_threshold 100',
      'key.quota_threshold 80',
    ]);
    for (const e of events.filter((e) => e.type === 'key.quota_threshold')) {
      expect(e.data).toMatchObject({ keyId: key.id, window: 'day', limit: 10 });
    }
    const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ event: string; state: string; attempts: number }>(
        'SELECT "event", "state", "attempts" FROM "webhook_deliveries" ORDER BY "event"',
      );
      expect(rows).toEqual([
        { event: 'key.created', state: 'succeeded', attempts: 1 },
        { event: 'key.quota_threshold', state: 'succeeded', attempts: 1 },
        { event: 'key.quota_threshold', state: 'succeeded', attempts: 1 },
      ]);
    } finally {
      await client.end();
    }
  });
});
