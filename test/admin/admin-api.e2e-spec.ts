import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import http from 'node:http';
import pg from 'pg';
import request from 'supertest';
import { AdminServer } from '../../src/admin/admin.server.js';
import { generateAdminToken } from '../../src/admin-tokens/admin-token-format.js';
import { AdminTokensService } from '../../src/admin-tokens/admin-tokens.service.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { parseJson } from '../../src/json/json-codec.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { issueApiKey, TEST_ACTOR } from '../support/api-keys.js';
import { createTestDatabase, describeEachDatabase, describeIfPostgres, TestDatabase } from '../support/databases.js';
import { migratePostgres } from '../../src/database/pg-database.js';
import { expectErrorBody } from '../support/error-body.js';
import { sample } from '../support/metrics-text.js';
import { waitFor } from '../support/wait-for.js';
import { UsageRecorder } from '../../src/usage/usage-recorder.js';

// Starting an app on a fresh database takes seconds, more on a busy machine.
jest.setTimeout(120_000);

/** The admin API of a running app: supertest against its admin listener. */
function adminOf(app: NestExpressApplication): ReturnType<typeof request> {
  const port = app.get(AdminServer).port();
  if (port === undefined) throw new Error('the admin listener is off');
  return request(`http://127.0.0.1:${port}`);
}

/**
 * GET /admin/v1/keys with `token`, sent from the loopback address `from` (127.0.0.0/8 is all
 * this machine's), so that tests can be several clients.
 */
function listKeysFrom(
  app: NestExpressApplication,
  from: string,
  token: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port: app.get(AdminServer).port(),
        path: '/admin/v1/keys',
        localAddress: from,
        agent: false,
        headers: { Authorization: `Bearer ${token}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode as number, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
  });
}

/** A body with int64 ids, read exactly. */
function exact<T>(res: request.Response): T {
  return parseJson(res.text) as T;
}

interface Key {
  id: bigint | number;
  name: string;
  plan: string;
  perMinute: number;
  perDay: number;
  prefix: string;
  state: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  expiresAt: string | null;
  key?: string;
}

interface Entry {
  id: number;
  at: string;
  actor: string;
  actorKind: string;
  actorTokenId?: number | bigint;
  action: string;
  keyId?: number | bigint;
  changes: Record<string, { before: unknown; after: unknown }>;
}

/** Fields no listing or entry may hold. */
const SECRET_FIELDS = ['hash', 'previousHash', 'secret'];

function expectNoSecrets(value: unknown, secrets: string[]): void {
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  for (const secret of secrets) expect(text).not.toContain(secret.slice(10));
  for (const field of SECRET_FIELDS) expect(text).not.toContain(`"${field}"`);
}

describeEachDatabase('the admin API on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let token: string;
  let tokenId: bigint;
  let admin: () => ReturnType<typeof request>;
  const auth = () => ({ Authorization: `Bearer ${token}` });

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { env: { ADMIN_PORT: '0', API_KEY_CACHE_TTL_MS: '300' } });
    ({
      token,
      info: { id: tokenId },
    } = await app.get(AdminTokensService).create('ops', TEST_ACTOR));
    admin = () => adminOf(app);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('is not served on the public port', async () => {
    const res = await request(app.getHttpServer()).get('/admin/v1/keys').set(auth());
    expectErrorBody(res, 404, 'route_not_found');
  });

  it('refuses a request without an admin token, with a wrong one, a revoked one, or an API key', async () => {
    const missing = await admin().get('/admin/v1/keys');
    expectErrorBody(missing, 401, 'missing_admin_token');
    expect(missing.headers['x-request-id']).toEqual(expect.any(String));
    const apiKey = await issueApiKey(app);
    const { token: revoked, info } = await app.get(AdminTokensService).create('leaver', TEST_ACTOR);
    await app.get(AdminTokensService).revoke(info.id, TEST_ACTOR);
    for (const wrong of [
      'asadm_' + '0'.repeat(49), // the shape, a wrong checksum
      token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'),
      apiKey,
      revoked,
      `${token} extra`,
    ]) {
      const res = await admin().get('/admin/v1/keys').set('Authorization', `Bearer ${wrong}`);
      expectErrorBody(res, 401, 'invalid_admin_token');
      expect(res.text).not.toContain(wrong.slice(6, 20));
    }
    expectErrorBody(
      await admin().get('/admin/v1/keys').set('Authorization', `Basic ${token}`),
      401,
      'invalid_admin_token',
    );
    // Nothing reached the service: no key changed, no entry recorded by a refused request.
    const refusedChanges = await admin().post('/admin/v1/keys').send({ name: 'x', plan: 'free' });
    expectErrorBody(refusedChanges, 401, 'missing_admin_token');
  });

  it('issues a key that the public API accepts, and lists it without its secret', async () => {
    const res = await admin().post('/admin/v1/keys').set(auth()).send({ name: 'Acme', plan: 'pro' });
    expect(res.status).toBe(201);
    const issued = exact<Key>(res);
    expect(issued).toMatchObject({ name: 'Acme', plan: 'pro', perMinute: 300, perDay: 10000, state: 'active' });
    expect(issued.key).toMatch(/^ask2?_[0-9A-Za-z]+$/);
    const used = await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${issued.key}`);
    expect(used.status).toBe(200);
    expect(used.headers['x-ratelimit-limit']).toContain('300');

    const shown = await admin().get(`/admin/v1/keys/${issued.id}`).set(auth());
    expect(shown.status).toBe(200);
    expect(exact<Key>(shown)).toMatchObject({ id: issued.id, name: 'Acme', state: 'active' });
    const listed = await admin().get('/admin/v1/keys').set(auth());
    expect(listed.status).toBe(200);
    const keys = exact<Key[]>(listed);
    expect(keys.find((k) => k.id === issued.id)).toMatchObject({ name: 'Acme', prefix: issued.prefix });
    for (const k of keys) expect(k).not.toHaveProperty('key');
    expectNoSecrets(keys, [issued.key as string]);
    const lastUsed = await waitFor(
      async () => exact<Key>(await admin().get(`/admin/v1/keys/${issued.id}`).set(auth())).lastUsedAt,
      { what: 'the key’s last use to be recorded' },
    );
    expect(Date.parse(lastUsed)).not.toBeNaN();
  });

  it('issues and changes a key\u2019s scopes, which the public API enforces', async () => {
    const res = await admin()
      .post('/admin/v1/keys')
      .set(auth())
      .send({ name: 'Reader', plan: 'pro', scopes: ['pets:read'] });
    expect(res.status).toBe(201);
    const issued = exact<Key & { scopes: string[] }>(res);
    expect(issued.scopes).toEqual(['pets:read']);
    const create = () =>
      request(app.getHttpServer())
        .post('/v1/pets')
        .set('Authorization', `Bearer ${issued.key}`)
        .send({ name: 'Rex', categoryId: 1 });
    expectErrorBody(await create(), 403, 'insufficient_scope');
    expectErrorBody(
      await admin()
        .post('/admin/v1/keys')
        .set(auth())
        .send({ name: 'Bad', plan: 'pro', scopes: ['pets:delete'] }),
      400,
      'validation_failed',
      /scopes must be/,
    );
    const changed = await admin()
      .patch(`/admin/v1/keys/${issued.id}`)
      .set(auth())
      .send({ scopes: ['pets:read', 'pets:write'] });
    expect(changed.status).toBe(200);
    expect(exact<Key & { scopes: string[] }>(changed).scopes).toEqual(['pets:read', 'pets:write']);
    const created = await waitFor(async () => ((r) => (r.status === 201 ? r : undefined))(await create()), {
      what: 'the widened key to create',
    });
    expect(created.body).toMatchObject({ name: 'Rex' });
  });

  it('reads a key\u2019s usage by hour and by day once the instance has written it', async () => {
    const issued = exact<Key>(await admin().post('/admin/v1/keys').set(auth()).send({ name: 'Counted', plan: 'pro' }));
    for (let i = 0; i < 3; i++) {
      const res = await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${issued.key}`);
      expect(res.status).toBe(200);
    }
    expect(await app.get(UsageRecorder).flush()).toBe(true);
    const hour = new Date();
    hour.setUTCMinutes(0, 0, 0);
    const from = new Date(hour.getTime() - 86_400_000).toISOString();
    const to = new Date(hour.getTime() + 3_600_000).toISOString();
    const byHour = await admin().get(`/admin/v1/keys/${issued.id}/usage`).query({ from, to }).set(auth());
    expect(byHour.status).toBe(200);
    expect(byHour.body).toEqual([{ period: hour.toISOString(), requests: 3, limited: 0 }]);
    const byDay = await admin()
      .get(`/admin/v1/keys/${issued.id}/usage`)
      .query({ from, to, granularity: 'day' })
      .set(auth());
    expect(byDay.status).toBe(200);
    expect((byDay.body as { requests: number }[]).reduce((n, p) => n + p.requests, 0)).toBe(3);
    expectErrorBody(
      await admin().get(`/admin/v1/keys/${issued.id}/usage`).query({ from: 'last week', to }).set(auth()),
      400,
      'invalid_parameter',
    );
    // A missing end is named as missing; a repeated one as repeated.
    const noEnd = expectErrorBody(
      await admin().get(`/admin/v1/keys/${issued.id}/usage`).query({ from }).set(auth()),
      400,
      'invalid_parameter',
    );
    expect([noEnd.message, noEnd.details]).toEqual(['to is required', [{ field: 'to', message: 'to is required' }]]);
    const twice = expectErrorBody(
      await admin().get(`/admin/v1/keys/${issued.id}/usage?from=${from}&to=${to}&to=${to}`).set(auth()),
      400,
      'invalid_parameter',
    );
    expect(twice.message).toBe('to must be given once');
    expectErrorBody(
      await admin().get(`/admin/v1/keys/${issued.id}/usage`).query({ from, to, colour: 'red' }).set(auth()),
      400,
      'unknown_parameter',
    );
    expectErrorBody(await admin().get('/admin/v1/keys/999999/usage').query({ from, to }).set(auth()), 404, 'not_found');
    expectErrorBody(
      await admin().get(`/admin/v1/keys/${issued.id}/usage`).query({ from, to }),
      401,
      'missing_admin_token',
    );
  });

  it('pages the keys with Link, and refuses a cursor it did not issue', async () => {
    for (let i = 0; i < 3; i++)
      await admin()
        .post('/admin/v1/keys')
        .set(auth())
        .send({ name: `page ${i}`, plan: 'free' });
    const seen: string[] = [];
    let next: string | undefined = '/admin/v1/keys?limit=2';
    while (next !== undefined) {
      const res: request.Response = await admin().get(next).set(auth());
      expect(res.status).toBe(200);
      const page = exact<Key[]>(res);
      expect(page.length).toBeLessThanOrEqual(2);
      seen.push(...page.map((k) => String(k.id)));
      next = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '')?.[1];
    }
    const all = exact<Key[]>(await admin().get('/admin/v1/keys?limit=100').set(auth()));
    expect(seen).toEqual(all.map((k) => String(k.id)));
    expectErrorBody(await admin().get('/admin/v1/keys?cursor=bm9wZQ').set(auth()), 400, 'invalid_parameter');
    expectErrorBody(await admin().get('/admin/v1/keys?colour=red').set(auth()), 400, 'unknown_parameter');
  });

  it('answers 404 for an unknown key and 400 for an id that is not one', async () => {
    expectErrorBody(await admin().get('/admin/v1/keys/9223372036854775807').set(auth()), 404, 'not_found');
    expectErrorBody(await admin().get('/admin/v1/keys/9223372036854775808').set(auth()), 400, 'invalid_parameter');
    expectErrorBody(await admin().post('/admin/v1/keys/0/revoke').set(auth()), 400, 'invalid_parameter');
    expectErrorBody(
      await admin().patch('/admin/v1/keys/9223372036854775807').set(auth()).send({ name: 'x' }),
      404,
      'not_found',
    );
  });

  it('changes a key with the same checks as the key tool, and applies the change to the public API', async () => {
    const issued = exact<Key>(await admin().post('/admin/v1/keys').set(auth()).send({ name: 'Beta', plan: 'free' }));
    const path = `/admin/v1/keys/${issued.id}`;
    for (const [body, message] of [
      [{ plan: 'enterprise' }, /enterprise plan needs both/],
      [{ plan: 'pro', perMinute: 5 }, /fixed limits/],
      [{ plan: 'gold' }, /plan must be one of/],
      [{ name: '   ' }, /name must be 1 to 100 characters/],
      [{ name: 7 }, /name must be a string/],
      [{ expiresAt: '2001-01-01T00:00:00Z' }, /expiresAt must be in the future/],
      [{ expiresAt: 'tomorrow' }, /expiresAt must be an RFC 3339 date-time with an offset/],
      [{ perMinute: 1.5 }, /perMinute must be an integer/],
      [{}, /at least one of/],
    ] as const) {
      expectErrorBody(await admin().patch(path).set(auth()).send(body), 400, 'validation_failed', message);
    }
    expectErrorBody(await admin().patch(path).set(auth()).send({ id: 3 }), 400, 'validation_failed');
    expectErrorBody(
      await admin().patch(path).set(auth()).set('Content-Type', 'application/json').send('{"name":'),
      400,
      'malformed_json',
    );
    // Nothing refused was stored.
    expect(exact<Key>(await admin().get(path).set(auth()))).toMatchObject({
      name: 'Beta',
      plan: 'free',
      expiresAt: null,
    });

    const expiresAt = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const changed = await admin()
      .patch(path)
      .set(auth())
      .send({ name: 'Beta (enterprise)', plan: 'enterprise', perMinute: 7, perDay: 70, expiresAt });
    expect(changed.status).toBe(200);
    expect(exact<Key>(changed)).toMatchObject({
      name: 'Beta (enterprise)',
      plan: 'enterprise',
      perMinute: 7,
      perDay: 70,
      expiresAt,
      state: 'expiring',
    });
    // An enterprise key given one new limit keeps the other.
    expect(exact<Key>(await admin().patch(path).set(auth()).send({ perDay: 700 }))).toMatchObject({
      perMinute: 7,
      perDay: 700,
    });
    const used = await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${issued.key}`);
    expect(used.headers['x-ratelimit-limit']).toContain('7');
  });

  it('refuses names, expiries and limits a key cannot have, with the reason, storing nothing', async () => {
    const names = async () =>
      exact<Key[]>(await admin().get('/admin/v1/keys?limit=100').set(auth())).map((k) => k.name);
    const before = await names();
    const notDateTime = /^expiresAt must be an RFC 3339 date-time with an offset/;
    const cases = [
      [{ name: 'Acme\u202Egnp.exe' }, /^name must not contain control characters/],
      [{ name: 'Acme\u2028' }, /^name must not contain control characters/],
      [{ name: 'Acme\u0085' }, /^name must not contain control characters/],
      [{ name: '\u3164' }, /^name must contain a visible character/],
      [{ expiresAt: '2027-01-01T00:00:00' }, notDateTime],
      [{ expiresAt: '2027-W05-3' }, notDateTime],
      [{ expiresAt: '2027-032' }, notDateTime],
      [{ expiresAt: '2027-02-30T00:00:00Z' }, notDateTime],
      [{ plan: 'enterprise', perMinute: 10, perDay: 1_000_000_001 }, /perDay must be from 1 to 1000000000/],
    ] as const;
    for (const [fields, message] of cases) {
      const res = await admin()
        .post('/admin/v1/keys')
        .set(auth())
        .send({ name: 'Valid', plan: 'free', ...fields });
      expectErrorBody(res, 400, 'validation_failed', message);
    }
    expect(await names()).toEqual(before);

    const issued = exact<Key>(
      await admin()
        .post('/admin/v1/keys')
        .set(auth())
        .send({ name: 'Eta', plan: 'enterprise', perMinute: 1, perDay: 1_000_000_000 }),
    );
    expect(issued).toMatchObject({ perDay: 1_000_000_000 });
    const path = `/admin/v1/keys/${issued.id}`;
    for (const [fields, message] of cases) {
      expectErrorBody(await admin().patch(path).set(auth()).send(fields), 400, 'validation_failed', message);
    }
    const { key: _key, ...record } = issued;
    expect(exact<Key>(await admin().get(path).set(auth()))).toEqual({ ...record, lastUsedAt: null });
    // With its offset, a date-time means one instant wherever it is read.
    const later = new Date(Date.now() + 30 * 86_400_000);
    later.setUTCMilliseconds(0);
    const local = `${later.toISOString().slice(0, 19)}+09:00`;
    expect(exact<Key>(await admin().patch(path).set(auth()).send({ expiresAt: local }))).toMatchObject({
      expiresAt: new Date(later.getTime() - 9 * 3_600_000).toISOString(),
    });
  });

  it('keeps an expired key expired: no change of expiry, name or plan, and no roll, brings it back', async () => {
    const issued = exact<Key>(await admin().post('/admin/v1/keys').set(auth()).send({ name: 'Theta', plan: 'free' }));
    const path = `/admin/v1/keys/${issued.id}`;
    await app.get(PrismaService)
      .$executeRaw`UPDATE api_keys SET expires_at = now() - interval '1 hour' WHERE id = ${BigInt(issued.id)}`;
    const expired = exact<Key>(await admin().get(path).set(auth()));
    expect(expired.state).toBe('expired');
    for (const body of [
      { expiresAt: null },
      { expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
      { name: 'Theta 2' },
      { plan: 'pro' },
    ]) {
      expectErrorBody(
        await admin().patch(path).set(auth()).send(body),
        400,
        'validation_failed',
        new RegExp(`^API key ${issued.id} has expired; issue a new key instead$`),
      );
    }
    expectErrorBody(
      await admin().post(`${path}/roll`).set(auth()).send({}),
      400,
      'validation_failed',
      new RegExp(`^API key ${issued.id} has expired; issue a new key instead$`),
    );
    expect(exact<Key>(await admin().get(path).set(auth()))).toEqual(expired);
    const pub = await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${issued.key}`);
    expectErrorBody(pub, 401, 'api_key_expired');
    // Revoking it is still allowed.
    expect(exact<Key>(await admin().post(`${path}/revoke`).set(auth()))).toMatchObject({ state: 'revoked' });
  });

  it('rolls a key with an overlap, and revokes it', async () => {
    const issued = exact<Key>(await admin().post('/admin/v1/keys').set(auth()).send({ name: 'Gamma', plan: 'free' }));
    const path = `/admin/v1/keys/${issued.id}`;
    expectErrorBody(
      await admin().post(`${path}/roll`).set(auth()).send({ overlapSeconds: -1 }),
      400,
      'validation_failed',
    );
    const rolled = await admin().post(`${path}/roll`).set(auth()).send({ overlapSeconds: 3600 });
    expect(rolled.status).toBe(200);
    const body = exact<Key & { previousSecretExpiresAt: string }>(rolled);
    expect(body.key).not.toBe(issued.key);
    expect(Date.parse(body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(3_500_000);
    const pub = request(app.getHttpServer());
    expect((await pub.get('/v1/pets').set('Authorization', `Bearer ${body.key}`)).status).toBe(200);
    expect((await pub.get('/v1/pets').set('Authorization', `Bearer ${issued.key}`)).status).toBe(200);

    const revoked = await admin().post(`${path}/revoke`).set(auth());
    expect(revoked.status).toBe(200);
    expect(exact<Key>(revoked)).toMatchObject({ state: 'revoked', revokedAt: expect.any(String) });
    for (const secret of [body.key, issued.key]) {
      expectErrorBody(await pub.get('/v1/pets').set('Authorization', `Bearer ${secret}`), 401, 'invalid_api_key');
    }
    // A revoked key takes no change.
    expectErrorBody(await admin().patch(path).set(auth()).send({ name: 'again' }), 400, 'validation_failed', /revoked/);
    expectErrorBody(await admin().post(`${path}/roll`).set(auth()).send({}), 400, 'validation_failed', /revoked/);
  });

  it('records every change in the audit log, newest first, with its actor and no secret', async () => {
    const issued = exact<Key>(await admin().post('/admin/v1/keys').set(auth()).send({ name: 'Delta', plan: 'free' }));
    await admin().patch(`/admin/v1/keys/${issued.id}`).set(auth()).send({ plan: 'pro' });
    const rolled = exact<Key>(
      await admin().post(`/admin/v1/keys/${issued.id}/roll`).set(auth()).send({ overlapSeconds: 0 }),
    );
    await admin().post(`/admin/v1/keys/${issued.id}/revoke`).set(auth());
    // Revoking again changes nothing and records nothing; a change that changes nothing neither.
    await admin().post(`/admin/v1/keys/${issued.id}/revoke`).set(auth());

    const res = await admin().get('/admin/v1/audit?limit=4').set(auth());
    expect(res.status).toBe(200);
    const entries = exact<Entry[]>(res);
    expect(entries.map((e) => e.action)).toEqual(['key.revoked', 'key.rolled', 'key.updated', 'key.created']);
    for (const e of entries) {
      expect(e).toMatchObject({
        actor: 'ops',
        actorKind: 'admin_token',
        actorTokenId: Number(tokenId),
        keyId: issued.id,
      });
    }
    expect(entries[2].changes).toEqual({
      plan: { before: 'free', after: 'pro' },
      perMinute: { before: 60, after: 300 },
      perDay: { before: 1000, after: 10000 },
    });
    expect(entries[3].changes.name).toEqual({ before: null, after: 'Delta' });
    expect(entries[1].changes.prefix).toEqual({ before: issued.prefix, after: rolled.prefix });
    expect(entries[0].changes).toEqual({ revokedAt: { before: null, after: expect.any(String) } });
    expect(entries[0].id).toBeGreaterThan(entries[1].id);
    expectNoSecrets(entries, [issued.key as string, rolled.key as string]);

    // The next page holds older entries, down to the tokens this suite issued.
    const next = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '')?.[1];
    expect(next).toBeDefined();
    const older = exact<Entry[]>(
      await admin()
        .get(next as string)
        .set(auth()),
    );
    expect(older[0].id).toBeLessThan(entries[3].id);
    const all = exact<Entry[]>(await admin().get('/admin/v1/audit?limit=100').set(auth()));
    expect(all.filter((e) => e.action === 'admin_token.created').map((e) => e.changes.name.after)).toEqual(
      expect.arrayContaining(['ops', 'leaver']),
    );
    const revoked = all.find((e) => e.action === 'admin_token.revoked');
    expect(revoked).toMatchObject({ actor: 'system:test', actorKind: 'system' });
    expect(revoked).not.toHaveProperty('actorTokenId');
  });

  it('refuses an admin token name that could pass for another kind of actor, storing nothing', async () => {
    const tokens = app.get(AdminTokensService);
    const before = await app.get(PrismaService).auditEntry.count();
    for (const name of ['cli:root', 'system:credential-revocation', 'ops:night', ' cli:root ']) {
      await expect(tokens.create(name, TEST_ACTOR)).rejects.toThrow(/must not contain ":"/);
    }
    expect((await tokens.list()).map((t) => t.name)).not.toContain('cli:root');
    expect(await app.get(PrismaService).auditEntry.count()).toBe(before);
  });

  it('keeps the audit log append-only: UPDATE, DELETE and TRUNCATE are refused by the database', async () => {
    const prisma = app.get(PrismaService);
    const before = await prisma.auditEntry.count();
    expect(before).toBeGreaterThan(0);
    for (const sql of [
      `UPDATE "audit_log" SET "actor" = 'someone else'`,
      `DELETE FROM "audit_log"`,
      `TRUNCATE "audit_log"`,
    ]) {
      await expect(prisma.$executeRawUnsafe(sql)).rejects.toThrow(/append-only/);
    }
    expect(await prisma.auditEntry.count()).toBe(before);
    expect(await prisma.auditEntry.count({ where: { actor: 'someone else' } })).toBe(0);
  });

  it('serves its own OpenAPI document without a token', async () => {
    const res = await admin().get('/admin/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body as { info: { title: string }; paths: Record<string, unknown> };
    expect(doc.info.title).toBe('Animal Store admin API');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/admin/v1/audit',
      '/admin/v1/keys',
      '/admin/v1/keys/{id}',
      '/admin/v1/keys/{id}/revoke',
      '/admin/v1/keys/{id}/roll',
      '/admin/v1/keys/{id}/usage',
      '/admin/v1/usage',
      '/admin/v1/usage/top-keys',
      '/admin/v1/webhooks',
      '/admin/v1/webhooks/{id}',
      '/admin/v1/webhooks/{id}/deliveries',
      '/admin/v1/webhooks/{id}/deliveries/{deliveryId}/retry',
      '/admin/v1/webhooks/{id}/rotate-secret',
      '/admin/v1/webhooks/{id}/test',
    ]);
  });

  it('writes and reads int64 ids exactly, beyond 2^53', async () => {
    await app.get(PrismaService).$executeRawUnsafe(`ALTER SEQUENCE "api_keys_id_seq" RESTART WITH 9007199254740993`);
    const res = await admin().post('/admin/v1/keys').set(auth()).send({ name: 'Big id', plan: 'free' });
    expect(res.status).toBe(201);
    expect(res.text).toContain('"id":9007199254740993');
    const shown = await admin().get('/admin/v1/keys/9007199254740993').set(auth());
    expect(exact<Key>(shown).id).toBe(9007199254740993n);
    await admin().patch('/admin/v1/keys/9007199254740993').set(auth()).send({ name: 'Big id, renamed' });
    const [entry] = exact<Entry[]>(await admin().get('/admin/v1/audit?limit=1').set(auth()));
    expect(entry).toMatchObject({ action: 'key.updated', keyId: 9007199254740993n });
  });

  it('counts admin calls in admin_requests_total, apart from the public requests', async () => {
    const metrics = app.get(MetricsService);
    const labels = { method: 'GET', route: '/admin/v1/keys', status_code: '401' };
    const before = sample(await metrics.render(), 'admin_requests_total', labels) ?? 0;
    await admin().get('/admin/v1/keys');
    const after = await waitFor(
      async () => {
        const n = sample(await metrics.render(), 'admin_requests_total', labels) ?? 0;
        return n > before ? n : undefined;
      },
      { what: 'the admin call to be counted' },
    );
    expect(after).toBe(before + 1);
  });
});

describeEachDatabase('forged admin tokens on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    // The clock stands still: no minute ends, so no budget is renewed during the test.
    const clock = new FakeClock(new Date('2026-11-22T15:00:05Z'));
    app = await startTestApp(db, { clock, env: { ADMIN_PORT: '0' } });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('looks up forged admin tokens within a budget per address, then refuses them 429 without a lookup', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const metric = async (name: string, labels: Record<string, string> = {}) =>
        sample(await app.get(MetricsService).render(), name, labels) ?? 0;
      const token = (await app.get(AdminTokensService).create('ops', TEST_ACTOR)).token;
      // A token found before, and a token never seen by this instance yet, both valid.
      expect((await listKeysFrom(app, '127.0.0.1', token)).status).toBe(200);
      const fresh = (await app.get(AdminTokensService).create(`fresh`, TEST_ACTOR)).token;
      const lookupsBefore = await metric('admin_token_lookups_total');
      const refusedBefore = await metric('admin_token_refusals_total', { reason: 'address_budget' });
      const answers = [];
      for (let i = 0; i < 30; i++) answers.push(await listKeysFrom(app, '127.0.0.2', generateAdminToken()));
      // The budget (API_KEY_FAILED_LOOKUPS_PER_ADDRESS, 10 a minute) of lookups, then refusals.
      expect(answers.map((r) => r.status)).toEqual([...Array(10).fill(401), ...Array(20).fill(429)]);
      expectErrorBody({ ...answers[0], body: answers[0].body }, 401, 'invalid_admin_token');
      const refused = answers[29];
      expectErrorBody({ ...refused, body: refused.body }, 429, 'rate_limit_exceeded', /admin tokens/);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(await metric('admin_token_lookups_total')).toBe(lookupsBefore + 10);
      expect(await metric('admin_token_refusals_total', { reason: 'address_budget' })).toBe(refusedBefore + 20);
      const crossings = warn.mock.calls.filter(([m]) => /unknown admin tokens/.test(String(m)));
      expect(crossings).toEqual([[expect.stringContaining('127.0.0.2')]]);
      // A token this instance has found is never refused because of its address; a new one from
      // another address is looked up as ever.
      expect((await listKeysFrom(app, '127.0.0.2', token)).status).toBe(200);
      expect((await listKeysFrom(app, '127.0.0.3', fresh)).status).toBe(200);
    } finally {
      warn.mockRestore();
    }
  });
});

describeIfPostgres('the admin API with two instances on one database', () => {
  let db: TestDatabase;
  let first: NestExpressApplication;
  let second: NestExpressApplication;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    // The first serves the admin API; the second only the public API, with the default cache TTL.
    first = await startTestApp(db, { env: { ADMIN_PORT: '0' } });
    second = await startTestApp(db);
    token = (await first.get(AdminTokensService).create('ops', TEST_ACTOR)).token;
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await db?.drop();
  });

  it('has no admin listener where ADMIN_PORT is unset', () => {
    expect(second.get(AdminServer).port()).toBeUndefined();
  });

  it('issues a key used on the other instance, whose plan change and revocation it applies within 5 s', async () => {
    const admin = adminOf(first);
    const auth = { Authorization: `Bearer ${token}` };
    const issued = exact<Key>(await admin.post('/admin/v1/keys').set(auth).send({ name: 'Two', plan: 'free' }));
    const use = () => request(second.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${issued.key}`);
    const used = await use();
    expect(used.status).toBe(200);
    expect(used.headers['x-ratelimit-limit']).toContain('60');

    expect((await admin.patch(`/admin/v1/keys/${issued.id}`).set(auth).send({ plan: 'business' })).status).toBe(200);
    const replanned = await waitFor(
      async () => {
        const res = await use();
        return res.headers['x-ratelimit-limit']?.includes('1000') ? res : undefined;
      },
      { what: 'the second instance to apply the plan change', timeoutMs: 5_000 },
    );
    expect(replanned.status).toBe(200);

    expect((await admin.post(`/admin/v1/keys/${issued.id}/revoke`).set(auth)).status).toBe(200);
    const refused = await waitFor(
      async () => {
        const res = await use();
        return res.status === 401 ? res : undefined;
      },
      { what: 'the second instance to refuse the revoked key', timeoutMs: 5_000 },
    );
    expectErrorBody(refused, 401, 'invalid_api_key');

    const entries = exact<Entry[]>(await admin.get('/admin/v1/audit?limit=3').set(auth));
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['key.revoked', 'ops'],
      ['key.updated', 'ops'],
      ['key.created', 'ops'],
    ]);
  });
});

describeIfPostgres('the audit log and the API’s database role (PostgreSQL)', () => {
  let db: TestDatabase;
  const role = `audit_app_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

  async function asOwner<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    db = await createTestDatabase('postgres', { migrate: false });
    // The API's role as deploy/postgres/10-app-role.sh makes it: rows of every table the owner
    // creates, through default privileges, granted before the migrations run.
    await asOwner(async (c) => {
      await c.query(`CREATE ROLE "${role}" NOLOGIN`);
      await c.query(
        `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "${role}"`,
      );
      await c.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO "${role}"`);
    });
    await migratePostgres(db.config().database, () => {});
  });

  afterAll(async () => {
    await db?.drop();
    const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await c.connect();
    await c.query(`DROP ROLE IF EXISTS "${role}"`);
    await c.end();
  });

  it('lets the role read audit_log and append only through append_audit_entry(), never insert, update, delete or truncate', async () => {
    const privileges = await asOwner(async (c) => {
      const { rows } = await c.query<{ t: string; p: string; ok: boolean }>(
        `SELECT t, p, has_table_privilege($1, t, p) AS ok
           FROM unnest(ARRAY['audit_log', 'api_keys']) AS t, unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p`,
        [role],
      );
      return Object.fromEntries(rows.map((r) => [`${r.t} ${r.p}`, r.ok]));
    });
    expect(privileges).toEqual({
      'audit_log SELECT': true,
      'audit_log INSERT': false,
      'audit_log UPDATE': false,
      'audit_log DELETE': false,
      'audit_log TRUNCATE': false,
      'api_keys SELECT': true,
      'api_keys INSERT': true,
      'api_keys UPDATE': true,
      'api_keys DELETE': true,
      'api_keys TRUNCATE': false,
    });
    // As the role itself: appending works, rewriting is refused.
    await asOwner(async (c) => {
      await c.query('BEGIN');
      await c.query(`SET LOCAL ROLE "${role}"`);
      const appended = await c.query<{ id: string }>(
        `SELECT append_audit_entry('system', 'system:test', NULL, 'key.created', NULL, NULL, '{}')::text AS id`,
      );
      expect(appended.rows[0].id).toMatch(/^[1-9]/);
      await expect(
        c.query(
          `INSERT INTO "audit_log" ("id", "at", "actor", "actor_kind", "action", "changes", "prev_hash", "hash")
           VALUES (0, '2001-01-01', 'cli:root', 'key_tool', 'key.created', '{}', repeat('0', 64), repeat('0', 64))`,
        ),
      ).rejects.toThrow(/permission denied/);
      await c.query('ROLLBACK');
      await c.query('BEGIN');
      await c.query(`SET LOCAL ROLE "${role}"`);
      await expect(c.query(`UPDATE "audit_log" SET "actor" = 'x'`)).rejects.toThrow(/permission denied/);
      await c.query('ROLLBACK');
      // Not even the owner inserts but through the function.
      await expect(
        c.query(`INSERT INTO "audit_log" ("actor", "actor_kind", "action", "changes", "prev_hash", "hash")
                 VALUES ('x', 'system', 'key.created', '{}', repeat('0', 64), repeat('0', 64))`),
      ).rejects.toThrow(/only through append_audit_entry/);
    });
  });
});
