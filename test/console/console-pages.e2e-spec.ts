import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { AdminTokensService } from '../../src/admin-tokens/admin-tokens.service.js';
import { ApiKeysService, keyState } from '../../src/api-keys/api-keys.service.js';
import { AuditLogService } from '../../src/audit/audit-log.service.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { UsageRecorder } from '../../src/usage/usage-recorder.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { CONSOLE_CSP, consoleClient, expectConsolePageHeaders } from '../support/console.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';

jest.setTimeout(180_000);

/** The text of a page's element with this id (a secret shown once). */
function textOf(page: string, id: string): string | undefined {
  return new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(page)?.[1];
}

/**
 * The operator console's pages on each database: what each shows, the headers on every one, and
 * issuing, saving, rolling and revoking through its forms, each audited with the signed-in
 * token's name.
 */
describeEachDatabase('console pages on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let cookie: string;
  const clock = new FakeClock(new Date('2026-11-27T12:30:00Z'));
  let c: ReturnType<typeof consoleClient>;
  let token: string;
  const api = () => request(app.getHttpServer());

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { clock, env: { ADMIN_PORT: '0', USAGE_FLUSH_MS: '600000' } });
    ({ token } = await app.get(AdminTokensService).create('ops-carol', TEST_ACTOR));
    c = consoleClient(app);
    cookie = await c.signIn(token);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('sends the console’s headers on every page and asset, and no inline script or style', async () => {
    const { info } = await app.get(ApiKeysService).create({ name: 'headers', plan: 'free' }, TEST_ACTOR);
    for (const path of ['/admin/', '/admin/keys', '/admin/keys/new', `/admin/keys/${info.id}`, '/admin/audit']) {
      const res = await c.get(path, cookie);
      expect(res.status).toBe(200);
      expectConsolePageHeaders(res);
      expect(res.text).toMatch(/^<!doctype html>\n<html lang="en">/);
      expect(res.text).not.toMatch(/<script>|<script [^>]*>[^<]|<style|style="|\son[a-z]+=|https?:\/\//);
      for (const src of res.text.matchAll(/(?:src|href)="(\/admin\/assets\/[^"]+)"/g)) {
        const asset = await c.agent().get(src[1]);
        expect(asset.status).toBe(200);
        expect(asset.headers['content-security-policy']).toBe(CONSOLE_CSP);
        expect(asset.headers['x-content-type-options']).toBe('nosniff');
        expect(asset.headers['content-type']).toMatch(/^text\/(javascript|css); charset=utf-8$/);
      }
    }
    expectErrorBody(await c.agent().get('/admin/assets/nothing.js'), 404, 'not_found');
    // The admin API keeps its own policy.
    const apiAnswer = await c.agent().get('/admin/v1/keys');
    expect(apiAnswer.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
  });

  it('issues a key through the form: the secret shown once works, and the change is audited with the actor', async () => {
    const res = await c.post('/admin/keys/new', cookie, {
      name: 'Shop <b>front</b>',
      plan: 'pro',
      perMinute: '',
      perDay: '',
      expiresAt: '',
      scopesGiven: '1',
      scopes: ['pets:read'],
    });
    expect(res.status).toBe(201);
    expect(res.text).toContain('Key “Shop &lt;b&gt;front&lt;/b&gt;” issued');
    expect(res.text).toContain('data-copy="secret"');
    const secret = textOf(res.text, 'secret') as string;
    expect(secret).toMatch(/^ask_/);
    expect((await api().get('/v1/pets').set('Authorization', `Bearer ${secret}`)).status).toBe(200);
    expect((await api().post('/v1/pets').set('Authorization', `Bearer ${secret}`).send({ name: 'x' })).status).toBe(
      403,
    );
    const id = /href="\/admin\/keys\/(\d+)"/.exec(res.text)?.[1] as string;
    const keyPage = await c.get(`/admin/keys/${id}`, cookie);
    expect(keyPage.status).toBe(200);
    expect(keyPage.text).not.toContain(secret);
    const { entries } = await app.get(AuditLogService).page(1, undefined, { keyId: BigInt(id) });
    expect(entries[0]).toMatchObject({ action: 'key.created', actor: 'ops-carol', actorKind: 'admin_token' });
  });

  it('shows a refused form again with the service’s message and issues nothing', async () => {
    const before = await app.get(PrismaService).apiKey.count();
    const res = await c.post('/admin/keys/new', cookie, {
      name: 'big',
      plan: 'enterprise',
      perMinute: '10',
      perDay: '5',
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('perMinute (10) cannot exceed perDay (5)');
    expect(res.text).toContain('value="big"');
    const badExpiry = await c.post('/admin/keys/new', cookie, { name: 'x', plan: 'free', expiresAt: 'tomorrow' });
    expect(badExpiry.status).toBe(400);
    expect(badExpiry.text).toContain('expiresAt must be');
    expect(await app.get(PrismaService).apiKey.count()).toBe(before);
  });

  it('saves, rolls and revokes a key through its page, each audited with the actor', async () => {
    const keys = app.get(ApiKeysService);
    const { info } = await keys.create({ name: 'to change', plan: 'free' }, TEST_ACTOR);
    const saved = await c.post(`/admin/keys/${info.id}/save`, cookie, {
      name: 'changed',
      plan: 'business',
      perMinute: '',
      perDay: '',
      expiresAt: '2027-06-01T00:00:00Z',
      scopesGiven: '1',
      scopes: ['pets:read'],
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.location).toBe(`/admin/keys/${info.id}?done=saved`);
    expect(await keys.get(info.id)).toMatchObject({
      name: 'changed',
      plan: 'business',
      scopes: ['pets:read'],
      expiresAt: new Date('2027-06-01T00:00:00Z'),
    });
    expect((await c.get(saved.headers.location, cookie)).text).toContain('<p class="notice" role="status">Saved.</p>');

    const rolled = await c.post(`/admin/keys/${info.id}/roll`, cookie, { overlapSeconds: '0' });
    expect(rolled.status).toBe(200);
    const secret = textOf(rolled.text, 'secret') as string;
    expect(secret).toMatch(/^ask_/);
    expect((await api().get('/v1/pets').set('Authorization', `Bearer ${secret}`)).status).toBe(200);

    const unconfirmed = await c.post(`/admin/keys/${info.id}/revoke`, cookie, {});
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.text).toContain('Revoking needs confirmation');
    expect((await keys.get(info.id))?.revokedAt).toBeNull();
    expect(unconfirmed.text).toContain('data-confirm="Revoke the key changed?');

    const revoked = await c.post(`/admin/keys/${info.id}/revoke`, cookie, { confirm: 'yes' });
    expect(revoked.status).toBe(303);
    expect((await keys.get(info.id))?.revokedAt).not.toBeNull();
    expect(revoked.headers.location).toBe(`/admin/keys/${info.id}?done=revoked`);
    const after = await c.get(revoked.headers.location, cookie);
    expect(after.text).toContain('The key is revoked');
    expect(after.text).toContain('This key is revoked: it takes no change.');

    const { entries } = await app.get(AuditLogService).page(10, undefined, { keyId: info.id });
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['key.revoked', 'ops-carol'],
      ['key.rolled', 'ops-carol'],
      ['key.updated', 'ops-carol'],
      ['key.created', 'system:test'],
    ]);
    expect(entries[2].changes).toMatchObject({ name: { before: 'to change', after: 'changed' } });
    // The key's page lists them.
    for (const action of ['key.revoked', 'key.rolled', 'key.updated', 'key.created']) {
      expect(after.text).toContain(`<td>${action}</td>`);
    }
  });

  it('counts the keys in each state as each key’s own state says, on the overview', async () => {
    const keys = app.get(ApiKeysService);
    const hour = 3_600_000;
    await keys.create({ name: 'state: expires in an hour', plan: 'free', expiresInMs: hour }, TEST_ACTOR);
    await keys.create({ name: 'state: expires in 3 days', plan: 'free', expiresInMs: 72 * hour }, TEST_ACTOR);
    await keys.create({ name: 'state: expires in 30 days', plan: 'free', expiresInMs: 720 * hour }, TEST_ACTOR);
    const revoked = await keys.create({ name: 'state: revoked', plan: 'free', expiresInMs: hour }, TEST_ACTOR);
    await keys.revoke(revoked.info.id, TEST_ACTOR);
    // Two hours on: the first key is expired, the revoked one stays revoked though its expiry passed.
    clock.set(new Date(clock.now().getTime() + 2 * hour).toISOString());
    try {
      const expected = { active: 0, expiring: 0, expired: 0, revoked: 0 };
      for (const k of await keys.list()) expected[keyState(k, clock.now())]++;
      expect(expected.expired * expected.expiring * expected.revoked * expected.active).toBeGreaterThan(0);
      expect(await keys.countByState()).toEqual(expected);
      // A session of its own: the suite's would end, idle for two hours.
      const res = await c.get('/admin/', await c.signIn(token));
      for (const [state, n] of Object.entries(expected)) {
        expect(res.text).toMatch(
          new RegExp(`href="/admin/keys\\?state=${state}">[^<]*</a></th><td class="num">${n}</td>`),
        );
      }
    } finally {
      clock.set('2026-11-27T12:30:00Z');
      // Signing in removed the suite's session, ended by then: the next tests get a new one.
      cookie = await c.signIn(token);
    }
  });

  it('shows the overview’s figures, the busiest keys and the hourly chart with its table', async () => {
    // The counts of earlier tests' requests are written first, then cleared.
    await app.get(UsageRecorder).flush();
    await app.get(PrismaService).keyUsage.deleteMany({});
    const keys = app.get(ApiKeysService);
    const busy = await keys.create({ name: 'busy one', plan: 'free' }, TEST_ACTOR);
    const quiet = await keys.create({ name: 'quiet one', plan: 'free' }, TEST_ACTOR);
    clock.set('2026-11-25T09:10:00Z');
    for (let i = 0; i < 3; i++) await api().get('/v1/pets').set('Authorization', `Bearer ${busy.key}`);
    clock.set('2026-11-27T11:10:00Z');
    for (let i = 0; i < 2; i++) await api().get('/v1/pets').set('Authorization', `Bearer ${busy.key}`);
    await api().get('/v1/pets').set('Authorization', `Bearer ${quiet.key}`);
    expect(await app.get(UsageRecorder).flush()).toBe(true);
    clock.set('2026-11-27T12:30:00Z');

    const res = await c.get('/admin/', cookie);
    expect(res.status).toBe(200);
    const figure = (label: string) => new RegExp(`${label}<strong>([^<]*)</strong>`).exec(res.text)?.[1];
    expect(figure('Requests, last 24 hours')).toBe('3');
    expect(figure('Requests, last 7 days')).toBe('6');
    expect(figure('Refused 429, last 7 days')).toBe('0');
    expect(res.text).toMatch(
      /busy one<\/a><\/td><td class="num">5<\/td><td class="num">0%<\/td>[\s\S]*quiet one<\/a><\/td><td class="num">1<\/td>/,
    );
    expect(res.text).toMatch(
      // The chart spans the 7 days up to now, in seconds, hour by hour.
      /<div class="chart" role="img" aria-label="Usage of all keys: requests and 429s per hour over the last 7 days" data-table="usage-hourly" data-from="1795177800" data-to="1795782600" data-step="3600"><\/div>/,
    );
    expect(res.text).toContain(
      '<th scope="row"><time datetime="2026-11-25T09:00:00.000Z">2026-11-25 09:00</time></th><td class="num">3</td><td class="num">0</td>',
    );
    expect(res.text).toContain(
      '<th scope="row"><time datetime="2026-11-27T11:00:00.000Z">2026-11-27 11:00</time></th><td class="num">3</td><td class="num">0</td>',
    );
    expect(res.text).toMatch(/href="\/admin\/keys\?state=revoked">revoked<\/a><\/th><td class="num">[1-9]/);
    expect(res.text).toContain('<script src="/admin/assets/uPlot.iife.min.js" defer></script>');

    const keyPage = await c.get(`/admin/keys/${busy.info.id}`, cookie);
    expect(keyPage.text).toMatch(
      /role="img" aria-label="Usage of key busy one: requests, 429s and operations per hour/,
    );
    expect(keyPage.text).toMatch(/role="img" aria-label="Usage of key busy one: requests, 429s and operations per day/);
    expect(keyPage.text).toContain('<th scope="col" class="num">listPets</th>');
    expect(keyPage.text).toContain(
      '<time datetime="2026-11-27T11:00:00.000Z">2026-11-27 11:00</time></th><td class="num">2</td><td class="num">0</td><td class="num">2</td>',
    );
    expect(keyPage.text).toContain(
      '<time datetime="2026-11-25T00:00:00.000Z">2026-11-25</time></th><td class="num">3</td>',
    );
  });

  it('lists keys with their plan, state and usage, filtered, searched by name or pasted key, and paged', async () => {
    const keys = app.get(ApiKeysService);
    const pasted = await keys.create({ name: 'leaky', plan: 'business' }, TEST_ACTOR);
    for (let i = 0; i < 52; i++) await keys.create({ name: `bulk ${i}`, plan: 'free' }, TEST_ACTOR);

    const byKey = await c.get(`/admin/keys?search=${encodeURIComponent(pasted.key)}`, cookie);
    expect(byKey.status).toBe(200);
    expect([...byKey.text.matchAll(/<td><a href="\/admin\/keys\/\d+">([^<]*)<\/a><\/td>/g)].map((m) => m[1])).toEqual([
      'leaky',
    ]);
    expect(byKey.text).toContain('<td>business</td><td>active</td><td>pets:read, pets:write</td>');

    const byName = await c.get('/admin/keys?search=BUSY', cookie);
    expect(byName.text).toMatch(
      /busy one<\/a><\/td><td>free<\/td><td>active<\/td><td>pets:read, pets:write<\/td><td><time[^>]*>[^<]*<\/time><\/td><td class="num">5<\/td>/,
    );

    const revoked = await c.get('/admin/keys?state=revoked', cookie);
    expect(revoked.text).toContain('>changed</a>');
    expect(revoked.text).not.toContain('>busy one</a>');

    const first = await c.get('/admin/keys?plan=free', cookie);
    const names = (page: string) =>
      [...page.matchAll(/<td><a href="\/admin\/keys\/\d+">([^<]*)<\/a><\/td>/g)].map((m) => m[1]);
    expect(names(first.text)).toHaveLength(50);
    expect(names(first.text).every((n) => n !== 'leaky')).toBe(true);
    const next = /<a href="([^"]+)" rel="next">/.exec(first.text)?.[1].replace(/&amp;/g, '&') as string;
    expect(next).toMatch(/^\/admin\/keys\?plan=free&cursor=/);
    const second = await c.get(next, cookie);
    expect(names(second.text).length).toBeGreaterThan(0);
    expect(names(second.text).filter((n) => names(first.text).includes(n))).toEqual([]);
    expect(second.text).toContain('<option value="free" selected>free</option>');
  });

  it('reads the audit log newest first, filtered by actor, action and key, and paged', async () => {
    const all = await c.get('/admin/audit', cookie);
    expect(all.status).toBe(200);
    const rows = (page: string) =>
      [...page.matchAll(/<tr><td><time datetime="[^"]+">[^<]*<\/time><\/td><td>([^<]*)<\/td><td>([^<]*)<\/td>/g)].map(
        (m) => [m[1], m[2]],
      );
    expect(rows(all.text)).toHaveLength(50);
    expect(all.text).toMatch(/<a href="\/admin\/audit\?cursor=[^"]+" rel="next">Older entries<\/a>/);

    const mine = await c.get('/admin/audit?actor=ops-carol', cookie);
    expect(rows(mine.text).length).toBeGreaterThanOrEqual(4);
    expect(rows(mine.text).every(([actor]) => actor === 'ops-carol')).toBe(true);

    const revocations = await c.get('/admin/audit?action=key.revoked&actor=ops-carol', cookie);
    expect(rows(revocations.text)).toEqual([['ops-carol', 'key.revoked']]);
    expect(revocations.text).toContain('<option value="key.revoked" selected>key.revoked</option>');

    const changed = (await app.get(PrismaService).apiKey.findFirst({ where: { name: 'changed' } }))?.id as bigint;
    const ofKey = await c.get(`/admin/audit?keyId=${changed}`, cookie);
    expect(rows(ofKey.text).map(([, action]) => action)).toEqual([
      'key.revoked',
      'key.rolled',
      'key.updated',
      'key.created',
    ]);

    const bad = await c.get('/admin/audit?keyId=abc', cookie);
    expect(bad.status).toBe(200);
    expect(bad.text).toContain('The key id must be a whole number from 1.');
  });

  it('answers an unknown key with the Error body', async () => {
    expectErrorBody(await c.get('/admin/keys/999999', cookie), 404, 'not_found');
    expectErrorBody(await c.get('/admin/keys/abc', cookie), 404, 'not_found');
  });
});
