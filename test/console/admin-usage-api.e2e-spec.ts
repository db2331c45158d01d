import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { AdminServer } from '../../src/admin/admin.server.js';
import { AdminTokensService } from '../../src/admin-tokens/admin-tokens.service.js';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { parseJson } from '../../src/json/json-codec.js';
import { UsageRecorder } from '../../src/usage/usage-recorder.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';

jest.setTimeout(120_000);

interface Row {
  period: string;
  requests: number;
  limited: number;
  operation?: string;
}

/**
 * The admin API's reads behind the console, on each database: a key's usage split by operation
 * (its sums those of the unsplit rows), the totals over all keys, the busiest keys, the key list's
 * filters and the audit log's.
 */
describeEachDatabase('the console’s admin API reads on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let token: string;
  const clock = new FakeClock(new Date('2026-11-27T06:30:00Z'));
  const admin = () => request(`http://127.0.0.1:${app.get(AdminServer).port()}`);
  const get = (path: string) => admin().get(path).set('Authorization', `Bearer ${token}`);
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { clock, env: { ADMIN_PORT: '0', USAGE_FLUSH_MS: '600000' } });
    ({ token } = await app.get(AdminTokensService).create('ops-console', TEST_ACTOR));
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  async function newKey(name: string, plan: 'pro' | 'enterprise' = 'enterprise') {
    const limits = plan === 'enterprise' ? { perMinute: 1_000_000, perDay: 2_000_000 } : {};
    const { info, key } = await app.get(ApiKeysService).create({ name, plan, ...limits }, TEST_ACTOR);
    return { id: info.id, key, prefix: info.prefix };
  }

  it('splits a key’s usage by operation, with the same sums as the unsplit rows', async () => {
    await app.get(PrismaService).keyUsage.deleteMany({});
    clock.set('2026-11-27T06:30:00Z');
    const a = await newKey('split');
    const bearer = { Authorization: `Bearer ${a.key}` };
    for (let i = 0; i < 3; i++) expect((await api().get('/v1/pets').set(bearer)).status).toBe(200);
    const created = await api().post('/v1/pets').set(bearer).send({ name: 'Rex', categoryId: 1 });
    expect(created.status).toBe(201);
    const petId = (parseJson(created.text) as { id: bigint | number }).id;
    expect((await api().get(`/v1/pets/${petId}`).set(bearer)).status).toBe(200);
    expectErrorBody(await api().get('/v1/nothing-here').set(bearer), 404, 'route_not_found');
    clock.set('2026-11-27T07:10:00Z');
    expect((await api().get('/v1/pets').set(bearer)).status).toBe(200);
    expect(await app.get(UsageRecorder).flush()).toBe(true);

    const range = 'from=2026-11-27&to=2026-11-28';
    const split = await get(`/admin/v1/keys/${a.id}/usage?${range}&by=operation`);
    expect(split.status).toBe(200);
    expect(split.headers['cache-control']).toBe('no-store');
    expect(split.body).toEqual([
      { period: '2026-11-27T06:00:00.000Z', operation: 'createPet', requests: 1, limited: 0 },
      { period: '2026-11-27T06:00:00.000Z', operation: 'getPet', requests: 1, limited: 0 },
      { period: '2026-11-27T06:00:00.000Z', operation: 'listPets', requests: 3, limited: 0 },
      { period: '2026-11-27T06:00:00.000Z', operation: 'other', requests: 1, limited: 0 },
      { period: '2026-11-27T07:00:00.000Z', operation: 'listPets', requests: 1, limited: 0 },
    ]);
    const whole = await get(`/admin/v1/keys/${a.id}/usage?${range}`);
    expect(whole.body).toEqual([
      { period: '2026-11-27T06:00:00.000Z', requests: 6, limited: 0 },
      { period: '2026-11-27T07:00:00.000Z', requests: 1, limited: 0 },
    ]);
    const days = await get(`/admin/v1/keys/${a.id}/usage?${range}&granularity=day&by=operation`);
    expect((days.body as Row[]).map((r) => `${r.operation}:${r.requests}`)).toEqual([
      'createPet:1',
      'getPet:1',
      'listPets:4',
      'other:1',
    ]);
    expectErrorBody(await get(`/admin/v1/keys/${a.id}/usage?${range}&by=key`), 400, 'invalid_parameter');
    expectErrorBody(
      await get(`/admin/v1/keys/${a.id}/usage?${range}&by=operation&by=operation`),
      400,
      'invalid_parameter',
    );
  });

  it('sums every key per hour or day, and names the busiest keys, most requests first', async () => {
    await app.get(PrismaService).keyUsage.deleteMany({});
    const recorder = app.get(UsageRecorder);
    const busy = await newKey('busy');
    const quiet = await newKey('quiet');
    const hour = Date.UTC(2026, 10, 26, 10);
    for (let i = 0; i < 5; i++) recorder.record(busy.id.toString(), 'listPets', hour, i === 0);
    recorder.record(quiet.id.toString(), 'getPet', hour, false);
    recorder.record(quiet.id.toString(), 'getPet', hour + 3_600_000, true);
    expect(await recorder.flush()).toBe(true);

    const hours = await get('/admin/v1/usage?from=2026-11-26&to=2026-11-27');
    expect(hours.status).toBe(200);
    expect(hours.body).toEqual([
      { period: '2026-11-26T10:00:00.000Z', requests: 6, limited: 1 },
      { period: '2026-11-26T11:00:00.000Z', requests: 1, limited: 1 },
    ]);
    const days = await get('/admin/v1/usage?from=2026-11-20&to=2026-11-28&granularity=day');
    expect(days.body).toEqual([{ period: '2026-11-26T00:00:00.000Z', requests: 7, limited: 2 }]);

    const top = await get('/admin/v1/usage/top-keys?from=2026-11-20&to=2026-11-28');
    expect(top.status).toBe(200);
    expect(parseJson(top.text)).toEqual([
      { keyId: Number(busy.id), name: 'busy', requests: 5, limited: 1 },
      { keyId: Number(quiet.id), name: 'quiet', requests: 2, limited: 1 },
    ]);
    const one = await get('/admin/v1/usage/top-keys?from=2026-11-26T11:00:00Z&to=2026-11-26T12:00:00Z&limit=1');
    expect(parseJson(one.text)).toEqual([{ keyId: Number(quiet.id), name: 'quiet', requests: 1, limited: 1 }]);

    for (const bad of [
      '/admin/v1/usage?from=2026-11-26',
      '/admin/v1/usage?from=2026-11-27&to=2026-11-26',
      '/admin/v1/usage?from=2026-11-26&to=2026-11-27&granularity=week',
      '/admin/v1/usage/top-keys?from=2026-01-01&to=2026-12-01',
      '/admin/v1/usage/top-keys?from=2026-11-26&to=2026-11-27&limit=0',
      '/admin/v1/usage/top-keys?from=2026-11-26&to=2026-11-27&limit=101',
    ]) {
      expectErrorBody(await get(bad), 400, 'invalid_parameter');
    }
    expectErrorBody(await get('/admin/v1/usage?from=2026-11-26&to=2026-11-27&x=1'), 400, 'unknown_parameter');
    expectErrorBody(await admin().get('/admin/v1/usage?from=2026-11-26&to=2026-11-27'), 401, 'missing_admin_token');
  });

  it('counts the busiest keys over hours that start and end inside a day, and follows rows added to and deleted', async () => {
    const prisma = app.get(PrismaService);
    await prisma.keyUsage.deleteMany({});
    const recorder = app.get(UsageRecorder);
    const a = await newKey('edges a');
    const b = await newKey('edges b');
    const at = (iso: string) => Date.parse(iso);
    const record = (key: bigint, iso: string, requests: number, limited = 0) => {
      for (let i = 0; i < requests; i++) recorder.record(key.toString(), 'listPets', at(iso), i < limited);
    };
    // The range: 24 Nov 23:00 to 26 Nov 02:00, so the hour before it and the hour after it fall
    // on days it only partly covers.
    const range = 'from=2026-11-24T23:00:00Z&to=2026-11-26T02:00:00Z';
    record(a.id, '2026-11-24T22:00:00Z', 10);
    record(a.id, '2026-11-24T23:00:00Z', 1, 1);
    record(a.id, '2026-11-25T12:00:00Z', 1);
    record(a.id, '2026-11-26T01:00:00Z', 1);
    record(a.id, '2026-11-26T02:00:00Z', 10);
    record(b.id, '2026-11-24T23:00:00Z', 2);
    record(b.id, '2026-11-25T05:00:00Z', 2, 2);
    record(b.id, '2026-11-26T00:00:00Z', 1);
    expect(await recorder.flush()).toBe(true);
    const top = async () => parseJson((await get(`/admin/v1/usage/top-keys?${range}`)).text);
    expect(await top()).toEqual([
      { keyId: Number(b.id), name: 'edges b', requests: 5, limited: 2 },
      { keyId: Number(a.id), name: 'edges a', requests: 3, limited: 1 },
    ]);

    // A second flush adds to rows already written.
    record(a.id, '2026-11-25T12:00:00Z', 3);
    expect(await recorder.flush()).toBe(true);
    expect(await top()).toEqual([
      { keyId: Number(a.id), name: 'edges a', requests: 6, limited: 1 },
      { keyId: Number(b.id), name: 'edges b', requests: 5, limited: 2 },
    ]);
    // Ending an hour earlier: that day's hour in the range holds fewer rows than those after it.
    const shorter = await get('/admin/v1/usage/top-keys?from=2026-11-24T23:00:00Z&to=2026-11-26T01:00:00Z');
    expect(parseJson(shorter.text)).toEqual([
      { keyId: Number(a.id), name: 'edges a', requests: 5, limited: 1 },
      { keyId: Number(b.id), name: 'edges b', requests: 5, limited: 2 },
    ]);

    // Rows deleted (as the purge deletes old hours) leave the totals and the busiest keys.
    await prisma.keyUsage.deleteMany({ where: { hour: { lt: new Date('2026-11-25T00:00:00Z') } } });
    expect(await top()).toEqual([
      { keyId: Number(a.id), name: 'edges a', requests: 5, limited: 0 },
      { keyId: Number(b.id), name: 'edges b', requests: 3, limited: 2 },
    ]);
    const days = await get('/admin/v1/usage?from=2026-11-24&to=2026-11-27&granularity=day');
    expect(days.body).toEqual([
      { period: '2026-11-25T00:00:00.000Z', requests: 6, limited: 2 },
      { period: '2026-11-26T00:00:00.000Z', requests: 12, limited: 0 },
    ]);
    const hours = await get(`/admin/v1/usage?${range}`);
    expect(hours.body).toEqual([
      { period: '2026-11-25T05:00:00.000Z', requests: 2, limited: 2 },
      { period: '2026-11-25T12:00:00.000Z', requests: 4, limited: 0 },
      { period: '2026-11-26T00:00:00.000Z', requests: 1, limited: 0 },
      { period: '2026-11-26T01:00:00.000Z', requests: 1, limited: 0 },
    ]);
  });

  it('filters the key list by a part of the name, a pasted key, plan and state, and pages with the filters', async () => {
    const keys = app.get(ApiKeysService);
    const acme = await newKey('Acme Production', 'pro');
    const acme2 = await newKey('ACME staging', 'pro');
    const other = await newKey('Zebra 100%', 'enterprise');
    await keys.revoke(acme2.id, TEST_ACTOR);
    const names = async (query: string) =>
      ((await get(`/admin/v1/keys?${query}`)).body as { name: string }[]).map((k) => k.name);

    expect(await names('search=acme')).toEqual(['Acme Production', 'ACME staging']);
    expect(await names('search=acme&state=revoked')).toEqual(['ACME staging']);
    expect(await names('search=acme&state=active')).toEqual(['Acme Production']);
    expect(await names('search=acme&plan=enterprise')).toEqual([]);
    expect(await names(`search=${encodeURIComponent(other.key)}`)).toEqual(['Zebra 100%']);
    expect(await names(`search=${encodeURIComponent(acme.key.slice(0, 9))}`)).toEqual(['Acme Production']);
    // LIKE's wildcards are the characters themselves.
    expect(await names('search=%25')).toEqual(['Zebra 100%']);
    expect(await names('search=_')).toEqual([]);

    const first = await get('/admin/v1/keys?search=acme&limit=1');
    expect(first.body).toHaveLength(1);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string)?.[1] as string;
    expect(next).toContain('search=acme');
    const second = await get(next);
    expect((second.body as { name: string }[]).map((k) => k.name)).toEqual(['ACME staging']);
    expect(second.headers.link).toBeUndefined();

    expectErrorBody(await get('/admin/v1/keys?state=sleeping'), 400, 'invalid_parameter');
    expectErrorBody(await get('/admin/v1/keys?plan=gold'), 400, 'invalid_parameter');
    expectErrorBody(await get(`/admin/v1/keys?search=${'a'.repeat(101)}`), 400, 'invalid_parameter');
    expectErrorBody(await get('/admin/v1/keys?search='), 400, 'invalid_parameter');
  });

  it('filters the audit log by actor, action and key, newest first, and pages with the filters', async () => {
    const { token: other } = await app.get(AdminTokensService).create('ops-other', TEST_ACTOR);
    const made = await admin()
      .post('/admin/v1/keys')
      .set('Authorization', `Bearer ${other}`)
      .send({ name: 'audited', plan: 'free' });
    expect(made.status).toBe(201);
    const id = Number((parseJson(made.text) as { id: number }).id);
    for (const name of ['audited 2', 'audited 3']) {
      const res = await admin().patch(`/admin/v1/keys/${id}`).set('Authorization', `Bearer ${other}`).send({ name });
      expect(res.status).toBe(200);
    }
    type Entry = { actor: string; action: string; keyId?: number };
    const entries = async (query: string) => parseJson((await get(`/admin/v1/audit?${query}`)).text) as Entry[];

    const byActor = await entries('actor=ops-other');
    expect(byActor.map((e) => e.action)).toEqual(['key.updated', 'key.updated', 'key.created']);
    expect(byActor.every((e) => e.actor === 'ops-other' && e.keyId === id)).toBe(true);
    expect((await entries(`keyId=${id}&action=key.created`)).map((e) => e.action)).toEqual(['key.created']);
    expect(await entries('actor=ops-other&action=key.revoked')).toEqual([]);
    expect(await entries('actor=nobody')).toEqual([]);

    const first = await get('/admin/v1/audit?actor=ops-other&limit=2');
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string)?.[1] as string;
    expect(next).toContain('actor=ops-other');
    expect((parseJson((await get(next)).text) as Entry[]).map((e) => e.action)).toEqual(['key.created']);

    expectErrorBody(await get('/admin/v1/audit?action=key.deleted'), 400, 'invalid_parameter');
    expectErrorBody(await get('/admin/v1/audit?keyId=0'), 400, 'invalid_parameter');
    expectErrorBody(await get('/admin/v1/audit?keyId=9223372036854775808'), 400, 'invalid_parameter');
  });
});
