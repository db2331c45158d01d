import type { NestExpressApplication } from '@nestjs/platform-express';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { AdminServer } from '../../src/admin/admin.server.js';
import { AdminTokensService } from '../../src/admin-tokens/admin-tokens.service.js';
import { parseJson } from '../../src/json/json-codec.js';
import { startTestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { createTestDatabase, describeIfPostgres, type TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { waitFor } from '../support/wait-for.js';
import { Receiver, type Received } from './receiver.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { WebhooksService } from '../../src/webhooks/webhooks.service.js';
import { sample } from '../support/metrics-text.js';
import { KEY_TOOL_CHECKSUM_SECRET, keyToolJson } from '../support/key-tool.js';
import { QuotaThresholds } from '../../src/rate-limit/quota-thresholds.js';
import { PrismaService } from '../../src/database/prisma.service.js';

jest.setTimeout(120_000);

interface Endpoint {
  id: bigint | number;
  url: string;
  events: string[];
  enabled: boolean;
  secret?: string;
}

interface Delivery {
  id: bigint | number;
  messageId: string;
  event: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
}

function exact<T>(res: request.Response): T {
  return parseJson(res.text) as T;
}

/** Verifies a request as a customer's receiver would, with the standardwebhooks package. */
function verify(secret: string, received: Received): unknown {
  return new Webhook(secret).verify(received.body, {
    'webhook-id': received.headers['webhook-id'] as string,
    'webhook-timestamp': received.headers['webhook-timestamp'] as string,
    'webhook-signature': received.headers['webhook-signature'] as string,
  });
}

describeIfPostgres('webhooks (PostgreSQL)', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let token: string;
  let receiver: Receiver;
  const admin = () => request(`http://127.0.0.1:${app.get(AdminServer).port()}`);
  const auth = () => ({ Authorization: `Bearer ${token}` });

  async function createEndpoint(events: string[], url = receiver.url): Promise<Endpoint> {
    const res = await admin().post('/admin/v1/webhooks').set(auth()).send({ url, events });
    expect(res.status).toBe(201);
    return exact<Endpoint>(res);
  }

  async function deliveries(id: bigint | number): Promise<Delivery[]> {
    const res = await admin().get(`/admin/v1/webhooks/${id}/deliveries`).set(auth());
    expect(res.status).toBe(200);
    return exact<Delivery[]>(res);
  }

  async function pgQuery<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await client.connect();
    try {
      return await client.query<R>(text, values);
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    app = await startTestApp(db, { env: { ADMIN_PORT: '0', WEBHOOK_RETRY_SCHEDULE: '0,1,1' } });
    ({ token } = await app.get(AdminTokensService).create('ops', TEST_ACTOR));
  });

  beforeEach(async () => {
    receiver = await new Receiver().start();
  });

  afterEach(async () => {
    // Nothing more is sent to this test's endpoints.
    const list = exact<Endpoint[]>(await admin().get('/admin/v1/webhooks').set(auth()));
    for (const e of list) await admin().delete(`/admin/v1/webhooks/${e.id}`).set(auth()).expect(204);
    await receiver.stop();
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('creates an endpoint with a whsec_ secret shown once, lists and changes it, each change audited', async () => {
    const created = await createEndpoint(['key.created']);
    expect(created).toMatchObject({ url: receiver.url, events: ['key.created'], enabled: true });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const shown = await admin().get(`/admin/v1/webhooks/${created.id}`).set(auth()).expect(200);
    expect(shown.text).not.toContain('secret"');
    const changed = await admin()
      .patch(`/admin/v1/webhooks/${created.id}`)
      .set(auth())
      .send({ enabled: false, description: 'ops' })
      .expect(200);
    expect(exact<Endpoint>(changed)).toMatchObject({ enabled: false, description: 'ops' });
    const audit = exact<{ action: string; changes: Record<string, unknown> }[]>(
      await admin().get('/admin/v1/audit').set(auth()).expect(200),
    );
    expect(audit.slice(0, 2).map((e) => e.action)).toEqual(['webhook.updated', 'webhook.created']);
    expect(audit[0].changes).toMatchObject({ enabled: { before: true, after: false } });
    expect(JSON.stringify(audit)).not.toContain(created.secret!.slice(6));
  });

  it('refuses invalid endpoints with the Error body, and unknown ids with 404', async () => {
    const bad = [
      { url: 'ftp://example.com/x', events: ['key.created'] },
      { url: 'not a url', events: ['key.created'] },
      { url: receiver.url, events: [] },
      { url: receiver.url, events: ['key.eaten'] },
      { url: receiver.url },
      { url: 42, events: ['key.created'] },
    ];
    for (const body of bad) {
      expectErrorBody(await admin().post('/admin/v1/webhooks').set(auth()).send(body), 400, 'validation_failed');
    }
    expectErrorBody(await admin().get('/admin/v1/webhooks/99999').set(auth()), 404, 'not_found');
    expectErrorBody(await admin().get('/admin/v1/webhooks/abc').set(auth()), 400, 'invalid_parameter');
    expectErrorBody(await admin().post('/admin/v1/webhooks/99999/test').set(auth()), 404, 'not_found');
    const endpoint = await createEndpoint(['key.created']);
    expectErrorBody(
      await admin().patch(`/admin/v1/webhooks/${endpoint.id}`).set(auth()).send({ enabled: 'yes' }),
      400,
      'validation_failed',
    );
    expectErrorBody(
      await admin().post(`/admin/v1/webhooks/${endpoint.id}/deliveries/99999/retry`).set(auth()),
      404,
      'not_found',
    );
  });

  it('a test event arrives signed in the Standard Webhooks format', async () => {
    const endpoint = await createEndpoint(['key.created']);
    const sent = await admin().post(`/admin/v1/webhooks/${endpoint.id}/test`).set(auth()).expect(202);
    expect(exact<Delivery>(sent)).toMatchObject({ event: 'webhook.test', state: 'pending' });
    await waitFor(() => receiver.received.length === 1, { what: 'the test event' });
    const [got] = receiver.received;
    expect(got.headers['webhook-id']).toBe(exact<Delivery>(sent).messageId);
    expect(verify(endpoint.secret!, got)).toMatchObject({
      type: 'webhook.test',
      data: { webhookId: `${endpoint.id}` },
    });
    expect(() => verify('whsec_' + Buffer.alloc(32, 1).toString('base64'), got)).toThrow();
  });

  it('a receiver failing twice then succeeding gets three attempts with one webhook-id', async () => {
    receiver.statuses = [500, 503];
    const endpoint = await createEndpoint(['key.created']);
    await admin().post(`/admin/v1/webhooks/${endpoint.id}/test`).set(auth()).expect(202);
    await waitFor(async () => (await deliveries(endpoint.id))[0]?.state === 'succeeded', { what: 'success' });
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of receiver.received) verify(endpoint.secret!, r);
    expect((await deliveries(endpoint.id))[0]).toMatchObject({ attempts: 3, lastStatus: 200, lastError: null });
  });

  it('a delivery that fails every attempt is failed, then retried through the admin API', async () => {
    receiver.statuses = [500, 500, 500];
    const endpoint = await createEndpoint(['key.created']);
    await admin().post(`/admin/v1/webhooks/${endpoint.id}/test`).set(auth()).expect(202);
    const [failed] = await waitFor(
      async () => {
        const list = await deliveries(endpoint.id);
        return list[0]?.state === 'failed' && list;
      },
      { what: 'the delivery to fail' },
    );
    expect(failed).toMatchObject({ attempts: 3, lastStatus: 500, lastError: expect.stringMatching(/HTTP 500/) });
    const retried = await admin()
      .post(`/admin/v1/webhooks/${endpoint.id}/deliveries/${failed.id}/retry`)
      .set(auth())
      .expect(202);
    expect(exact<Delivery>(retried)).toMatchObject({ state: 'pending' });
    await waitFor(async () => (await deliveries(endpoint.id))[0]?.state === 'succeeded', { what: 'the retry' });
    expect(receiver.received).toHaveLength(4);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expectErrorBody(
      await admin().post(`/admin/v1/webhooks/${endpoint.id}/deliveries/${failed.id}/retry`).set(auth()),
      400,
      'validation_failed',
    );
  });

  it('after a rotation, deliveries carry two signatures, and each secret verifies', async () => {
    const endpoint = await createEndpoint(['key.created']);
    const rotated = exact<Endpoint & { previousSecretExpiresAt: string }>(
      await admin().post(`/admin/v1/webhooks/${endpoint.id}/rotate-secret`).set(auth()).expect(200),
    );
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    await admin().post(`/admin/v1/webhooks/${endpoint.id}/test`).set(auth()).expect(202);
    await waitFor(() => receiver.received.length === 1, { what: 'the test event' });
    const [got] = receiver.received;
    expect((got.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    verify(endpoint.secret!, got);
    verify(rotated.secret!, got);
  });

  it('key.created and key.revoked arrive after the admin API issues and revokes a key', async () => {
    const endpoint = await createEndpoint(['key.created', 'key.revoked']);
    const key = exact<{ id: bigint | number }>(
      await admin().post('/admin/v1/keys').set(auth()).send({ name: 'hooked', plan: 'free' }).expect(201),
    );
    await admin().post(`/admin/v1/keys/${key.id}/revoke`).set(auth()).expect(200);
    await waitFor(() => receiver.received.length === 2, { what: 'two key events' });
    const events = receiver.received.map((r) => verify(endpoint.secret!, r) as { type: string; data: object });
    expect(events.map((e) => e.type).sort()).toEqual(['key.created', 'key.revoked']);
    const revoked = events.find((e) => e.type === 'key.revoked')!;
    expect(revoked.data).toMatchObject({ keyId: `${key.id}`, name: 'hooked', reason: 'requested', state: 'revoked' });
    expect(JSON.stringify(events)).not.toMatch(/"(hash|key)"/);
  });

  it('changes made with the key tool are announced too, and delivered by the running instance', async () => {
    const endpoint = await createEndpoint(['key.created', 'key.revoked']);
    const env = { ...db.env, API_KEY_CHECKSUM_SECRET: KEY_TOOL_CHECKSUM_SECRET };
    const created = await keyToolJson<{ id: number }>(['create', '--name', 'from-the-tool', '--plan', 'free'], env);
    await keyToolJson(['revoke', String(created.id)], env);
    await waitFor(() => receiver.received.length === 2, { what: "the key tool's two key events" });
    const events = receiver.received.map((r) => verify(endpoint.secret!, r) as { type: string; data: object });
    expect(events.map((e) => e.type).sort()).toEqual(['key.created', 'key.revoked']);
    expect(events.find((e) => e.type === 'key.revoked')!.data).toMatchObject({
      keyId: `${created.id}`,
      name: 'from-the-tool',
      reason: 'requested',
    });
  });

  it('a key change whose transaction fails announces nothing', async () => {
    await createEndpoint(['key.updated']);
    const key = exact<{ id: bigint | number }>(
      await admin().post('/admin/v1/keys').set(auth()).send({ name: 'doomed-not-yet', plan: 'free' }).expect(201),
    );
    // A check at commit, after the event was enqueued, refuses the name "doomed".
    const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(`
        CREATE FUNCTION refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS
          $$ BEGIN RAISE EXCEPTION 'doomed at commit'; END $$;
        CREATE CONSTRAINT TRIGGER refuse_doomed AFTER UPDATE ON api_keys DEFERRABLE INITIALLY DEFERRED
          FOR EACH ROW WHEN (NEW.name = 'doomed') EXECUTE FUNCTION refuse_doomed();`);
      const refused = await admin().patch(`/admin/v1/keys/${key.id}`).set(auth()).send({ name: 'doomed' });
      expect(refused.status).toBeGreaterThanOrEqual(500);
      await admin().patch(`/admin/v1/keys/${key.id}`).set(auth()).send({ name: 'spared' }).expect(200);
      await waitFor(() => receiver.received.length >= 1, { what: 'the committed change' });
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM webhook_deliveries WHERE payload LIKE '%doomed"%'`,
      );
      expect(rows[0].n).toBe('0');
    } finally {
      await client.query('DROP TRIGGER IF EXISTS refuse_doomed ON api_keys; DROP FUNCTION IF EXISTS refuse_doomed()');
      await client.end();
    }
    expect(receiver.events().map((e) => [e.type, e.data.name])).toEqual([['key.updated', 'spared']]);
  });
  it('key.expiring is announced within 7 days and within 1 day of expiry, each once', async () => {
    const endpoint = await createEndpoint(['key.expiring']);
    const issue = async (name: string, inMs: number) =>
      exact<{ id: bigint | number }>(
        await admin()
          .post('/admin/v1/keys')
          .set(auth())
          .send({ name, plan: 'free', expiresAt: new Date(Date.now() + inMs).toISOString() })
          .expect(201),
      ).id;
    const week = await issue('in three days', 3 * 86_400_000);
    const day = await issue('in twelve hours', 12 * 3_600_000);
    // The check every instance with a running queue makes every 5 minutes, made now, twice.
    await app.get(WebhooksService).checkExpiring();
    await app.get(WebhooksService).checkExpiring();
    await waitFor(() => receiver.received.length === 2, { what: 'two key.expiring events' });
    const events = receiver.received.map((r) => verify(endpoint.secret!, r) as { type: string; data: object });
    expect(events.map((e) => e.data).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      expect.objectContaining({ keyId: `${week}`, within: '7d' }),
      expect.objectContaining({ keyId: `${day}`, within: '1d' }),
    ]);
    expect(events.map((e) => e.type)).toEqual(['key.expiring', 'key.expiring']);
    expect(await deliveries(endpoint.id)).toHaveLength(2);
  });

  it('a reported leak announces key.revoked with reason leaked', async () => {
    const endpoint = await createEndpoint(['key.revoked']);
    const key = exact<{ id: bigint | number; key: string }>(
      await admin().post('/admin/v1/keys').set(auth()).send({ name: 'leaky', plan: 'free' }).expect(201),
    );
    await request(app.getHttpServer())
      .post('/v1/credentials/revoke')
      .send({ credentials: [key.key] })
      .expect(202);
    await waitFor(() => receiver.received.length === 1, { what: 'the leak event' });
    expect(verify(endpoint.secret!, receiver.received[0])).toMatchObject({
      type: 'key.revoked',
      data: { keyId: `${key.id}`, reason: 'leaked', state: 'revoked' },
    });
  });

  it('a redirect or an oversized answer costs one attempt each, and is counted in the metrics', async () => {
    const metrics = app.get(MetricsService);
    const before =
      sample(await metrics.render(), 'webhook_deliveries_total', { event: 'webhook.test', outcome: 'retrying' }) ?? 0;
    receiver.answers = [
      (res) => {
        res.statusCode = 302;
        res.setHeader('Location', receiver.url + '/elsewhere');
        res.end();
      },
      (res) => {
        res.statusCode = 500;
        res.end(Buffer.alloc(10 * 1024 * 1024, 'x'));
      },
    ];
    const endpoint = await createEndpoint(['key.created']);
    await admin().post(`/admin/v1/webhooks/${endpoint.id}/test`).set(auth()).expect(202);
    await waitFor(async () => (await deliveries(endpoint.id))[0]?.state === 'succeeded', { what: 'success' });
    expect(receiver.received.map((r) => r.url)).toEqual(['/hooks', '/hooks', '/hooks']);
    const after = sample(await metrics.render(), 'webhook_deliveries_total', {
      event: 'webhook.test',
      outcome: 'retrying',
    });
    expect(after).toBe(before + 2);
  });

  it("key.quota_threshold arrives once at 80% and once at 100% of a key's day, not again after 429s or a restart", async () => {
    const endpoint = await createEndpoint(['key.quota_threshold']);
    const key = exact<{ id: bigint | number; key: string }>(
      await admin()
        .post('/admin/v1/keys')
        .set(auth())
        .send({ name: 'metered', plan: 'enterprise', perMinute: 10, perDay: 10 })
        .expect(201),
    );
    // A notice of long ago, deleted when the key next crosses a threshold.
    await pgQuery(`INSERT INTO "key_quota_notices" ("key_id", "day", "threshold") VALUES ($1, current_date - 30, 80)`, [
      String(key.id),
    ]);
    const call = (instance: NestExpressApplication) =>
      request(instance.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key.key}`);
    for (let n = 1; n <= 10; n++) {
      const res = await call(app);
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(10 - n));
    }
    expectErrorBody(await call(app), 429, 'rate_limit_exceeded', /10 requests per day/);
    // The flush every instance makes every few seconds, made now.
    await app.get(QuotaThresholds).flush();
    await waitFor(() => receiver.received.length === 2, { what: 'two key.quota_threshold events' });
    const events = receiver.received.map(
      (r) => verify(endpoint.secret!, r) as { type: string; data: { threshold: number } },
    );
    expect(events.sort((a, b) => a.data.threshold - b.data.threshold)).toEqual([
      expect.objectContaining({
        type: 'key.quota_threshold',
        data: { keyId: `${key.id}`, window: 'day', limit: 10, used: 8, threshold: 80 },
      }),
      expect.objectContaining({
        type: 'key.quota_threshold',
        data: { keyId: `${key.id}`, window: 'day', limit: 10, used: 10, threshold: 100 },
      }),
    ]);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(2);

    // More refusals, and their flush: nothing new.
    for (let n = 0; n < 3; n++) expectErrorBody(await call(app), 429, 'rate_limit_exceeded');
    await app.get(QuotaThresholds).flush();
    // A restarted instance counts afresh in memory and sees both thresholds crossed again; the
    // notices recorded keep them from being announced twice.
    const restarted = await startTestApp(db, { env: { ADMIN_PORT: '0' } });
    try {
      await waitFor(() => restarted.get(WebhooksService).subscribes('key.quota_threshold'), {
        what: "the restarted instance's queue",
      });
      for (let n = 1; n <= 10; n++) expect((await call(restarted)).status).toBe(200);
      expectErrorBody(await call(restarted), 429, 'rate_limit_exceeded');
      await restarted.get(QuotaThresholds).flush();
    } finally {
      await restarted.close();
    }
    expect((await deliveries(endpoint.id)).map((d) => d.event)).toEqual(['key.quota_threshold', 'key.quota_threshold']);
    const { rows } = await pgQuery<{ threshold: number }>(
      'SELECT "threshold" FROM "key_quota_notices" WHERE "key_id" = $1 ORDER BY "threshold"',
      [String(key.id)],
    );
    expect(rows.map((r) => r.threshold)).toEqual([80, 100]);
    // A later event is the next thing the receiver gets.
    await admin().post(`/admin/v1/webhooks/${endpoint.id}/test`).set(auth()).expect(202);
    await waitFor(() => receiver.received.length === 3, { what: 'the test event' });
    expect(receiver.events()[2].type).toBe('webhook.test');
  });

  it('quota thresholds are not recorded while no endpoint subscribes to them', async () => {
    await createEndpoint(['key.created']);
    const key = exact<{ id: bigint | number; key: string }>(
      await admin()
        .post('/admin/v1/keys')
        .set(auth())
        .send({ name: 'unwatched', plan: 'enterprise', perMinute: 5, perDay: 5 })
        .expect(201),
    );
    for (let n = 1; n <= 6; n++) {
      await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key.key}`);
    }
    await app.get(QuotaThresholds).flush();
    const { rows } = await pgQuery('SELECT 1 FROM "key_quota_notices" WHERE "key_id" = $1', [String(key.id)]);
    expect(rows).toEqual([]);
    await waitFor(() => receiver.received.length === 1, { what: 'key.created' });
    expect(receiver.events().map((e) => e.type)).toEqual(['key.created']);
  });

  it('an instance whose queue is off enqueues in its change, and another instance delivers', async () => {
    const second = await startTestApp(db, { env: { ADMIN_PORT: '0' } });
    try {
      const endpoint = await createEndpoint(['key.created']);
      // The second instance started before the endpoint existed: its queue has not started.
      await second.get(ApiKeysService).create({ name: 'from the second', plan: 'free' }, TEST_ACTOR);
      await waitFor(() => receiver.received.length === 1, { what: 'the event of the second instance' });
      expect(verify(endpoint.secret!, receiver.received[0])).toMatchObject({
        type: 'key.created',
        data: { name: 'from the second' },
      });
    } finally {
      await second.close();
    }
  });
});

describeIfPostgres('webhook targets in production (PostgreSQL)', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let token: string;
  const production = {
    NODE_ENV: 'production',
    ADMIN_PORT: '0',
    API_KEY_CHECKSUM_SECRET: 'test-checksum-secret-of-enough-length-000',
    METRICS_TOKEN: 'test-metrics-token-of-enough-length-0000',
    WEBHOOK_SECRET_KEY: 'test-webhook-secret-key-of-enough-length',
  };

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    app = await startTestApp(db, { env: production });
    ({ token } = await app.get(AdminTokensService).create('ops', TEST_ACTOR));
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('refuses loopback, private, link-local and metadata targets at creation', async () => {
    const admin = request(`http://127.0.0.1:${app.get(AdminServer).port()}`);
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost:9/x',
      'http://10.1.2.3/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]:9/x',
      'http://[::ffff:127.0.0.1]/x',
    ]) {
      const res = await admin
        .post('/admin/v1/webhooks')
        .set({ Authorization: `Bearer ${token}` })
        .send({ url, events: ['key.created'] });
      const body = expectErrorBody(res, 400, 'validation_failed', /WEBHOOK_ALLOW_PRIVATE_TARGETS/);
      expect(body.details).toEqual([{ field: 'url', message: expect.stringMatching(/refused in production/) }]);
    }
  });
});

describe('webhooks on the embedded database', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { env: { ADMIN_PORT: '0' } });
    ({ token } = await app.get(AdminTokensService).create('ops', TEST_ACTOR));
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('answer 501 not_implemented, and key changes still work', async () => {
    const admin = () => request(`http://127.0.0.1:${app.get(AdminServer).port()}`);
    const auth = { Authorization: `Bearer ${token}` };
    const res = await admin()
      .post('/admin/v1/webhooks')
      .set(auth)
      .send({ url: 'http://127.0.0.1:9/x', events: ['key.created'] });
    expectErrorBody(res, 501, 'not_implemented', /PostgreSQL/);
    expectErrorBody(await admin().get('/admin/v1/webhooks').set(auth), 501, 'not_implemented');
    await admin().post('/admin/v1/keys').set(auth).send({ name: 'unhooked', plan: 'free' }).expect(201);
  });

  it('a key past its day thresholds is refused as usual, and nothing is recorded', async () => {
    const admin = () => request(`http://127.0.0.1:${app.get(AdminServer).port()}`);
    const key = JSON.parse(
      (
        await admin()
          .post('/admin/v1/keys')
          .set({ Authorization: `Bearer ${token}` })
          .send({ name: 'metered', plan: 'enterprise', perMinute: 3, perDay: 3 })
          .expect(201)
      ).text,
    ) as { key: string };
    const call = () => request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key.key}`);
    for (let n = 1; n <= 3; n++) expect((await call()).status).toBe(200);
    expectErrorBody(await call(), 429, 'rate_limit_exceeded');
    await app.get(QuotaThresholds).flush();
    expect(await app.get(PrismaService).keyQuotaNotice.count()).toBe(0);
  });
});
