import { createHash } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { generateAdminToken } from '../../src/admin-tokens/admin-token-format.js';
import { AdminTokensService } from '../../src/admin-tokens/admin-tokens.service.js';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { CONSOLE_CSP, consoleClient, expectConsolePageHeaders } from '../support/console.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';

jest.setTimeout(120_000);

const MINUTE = 60_000;

/**
 * Signing in to the operator console and its sessions, on each database: the sign-in form, the
 * cookie, sign-out, idle and absolute expiry on the app's clock, a revoked token ending its
 * sessions, the budget of unknown tokens, cross-site changes refused, and the public listener
 * serving none of it.
 */
describeEachDatabase('console sessions on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let token: string;
  let tokenId: bigint;
  const clock = new FakeClock(new Date('2026-11-27T08:00:00Z'));
  let console_: ReturnType<typeof consoleClient>;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { clock, env: { ADMIN_PORT: '0', API_KEY_FAILED_LOOKUPS_PER_ADDRESS: '4' } });
    const issued = await app.get(AdminTokensService).create('ops-alice', TEST_ACTOR);
    token = issued.token;
    tokenId = issued.info.id;
    console_ = consoleClient(app);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('shows the sign-in form with the console’s headers', async () => {
    const res = await console_.agent().get('/admin/sign-in');
    expect(res.status).toBe(200);
    expectConsolePageHeaders(res);
    expect(res.text).toContain('<input id="token" name="token" type="password"');
    expect(res.text).toMatch(/<button type="submit">Sign in<\/button>/);
    expect(res.text).not.toMatch(/<script>|style="|\son[a-z]+=/);
  });

  it('leads a page without a session to sign-in, then back to it', async () => {
    const res = await console_.agent().get('/admin/keys?plan=pro');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/admin/sign-in?next=%2Fadmin%2Fkeys%3Fplan%3Dpro');
    const form = await console_.agent().get(res.headers.location);
    expect(form.text).toContain('name="next" value="/admin/keys?plan=pro"');

    const signedIn = await console_
      .agent()
      .post('/admin/sign-in')
      .set('Origin', console_.origin())
      .type('form')
      .send({ token, next: '/admin/keys?plan=pro' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toBe('/admin/keys?plan=pro');
    const cookie = (signedIn.headers['set-cookie'] as unknown as string[])[0];
    expect(cookie).toMatch(/^admin_session=[A-Za-z0-9_-]{43}; Path=\/admin; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    const id = cookie.split(';')[0].split('=')[1];
    const rows = await app.get(PrismaService).adminSession.findMany({ where: { adminTokenId: tokenId } });
    // The database holds the id's hash, never the id.
    expect(rows.map((r) => r.idHash)).toContain(createHash('sha256').update(id).digest('hex'));
    expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(id);

    const page = await console_.get('/admin/keys?plan=pro', cookie.split(';')[0]);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Signed in as <strong>ops-alice</strong>');
  });

  it('never sends the browser off the console after sign-in', async () => {
    for (const next of ['https://evil.example/', '//evil.example/admin/', '/\\evil.example', '/admin/v1/keys']) {
      const res = await console_
        .agent()
        .post('/admin/sign-in')
        .set('Origin', console_.origin())
        .type('form')
        .send({ token, next });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/admin/');
    }
  });

  it('refuses anything but a live admin token with one message that tells nothing of which tokens exist', async () => {
    const revoked = await app.get(AdminTokensService).create('ops-gone', TEST_ACTOR);
    await app.get(AdminTokensService).revoke(revoked.info.id, TEST_ACTOR);
    const { key } = await app.get(ApiKeysService).create({ name: 'an api key', plan: 'free' }, TEST_ACTOR);
    const texts: string[] = [];
    for (const attempt of [revoked.token, key, 'not a token at all']) {
      const res = await console_
        .agent()
        .post('/admin/sign-in')
        .set('Origin', console_.origin())
        .type('form')
        .send({ token: attempt });
      expect(res.status).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      texts.push(res.text.match(/<p class="error" role="alert">(.*)<\/p>/)?.[1] ?? '');
    }
    expect(new Set(texts).size).toBe(1);
    expect(texts[0]).toBe('That is not a valid admin token: it is unknown or has been revoked.');
  });

  it('budgets sign-in attempts with unknown tokens per address, as the admin API does, and still admits a known token', async () => {
    clock.set('2026-11-27T08:10:05Z');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await console_
        .agent()
        .post('/admin/sign-in')
        .set('Origin', console_.origin())
        .type('form')
        .send({ token: generateAdminToken() });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.headers['retry-after']).toBe('55');
        expect(res.text).toContain('Too many unknown admin tokens');
      }
    }
    expect(statuses.slice(-2)).toEqual([429, 429]);
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(3);
    // The admin API shares the budget: a guessed bearer token is refused too.
    const api = await console_.agent().get('/admin/v1/keys').set('Authorization', `Bearer ${generateAdminToken()}`);
    expectErrorBody(api, 429, 'rate_limit_exceeded');
    // A token this instance has found before is never refused for its address.
    expect(await console_.signIn(token)).toMatch(/^admin_session=/);
    clock.set('2026-11-27T08:11:05Z');
  });

  it('signs out: the session ends and the cookie is cleared', async () => {
    const cookie = await console_.signIn(token);
    expect((await console_.get('/admin/', cookie)).status).toBe(200);
    const out = await console_.post('/admin/sign-out', cookie, {});
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/admin/sign-in');
    expect((out.headers['set-cookie'] as unknown as string[])[0]).toBe(
      'admin_session=; Path=/admin; Max-Age=0; HttpOnly; SameSite=Strict',
    );
    const after = await console_.get('/admin/', cookie);
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/admin/sign-in');
  });

  it('ends a session after 30 idle minutes, each request restarting the wait', async () => {
    clock.set('2026-11-27T09:00:00Z');
    const cookie = await console_.signIn(token);
    clock.set(new Date(clock.current.getTime() + 29 * MINUTE));
    expect((await console_.get('/admin/keys', cookie)).status).toBe(200);
    clock.set(new Date(clock.current.getTime() + 29 * MINUTE));
    expect((await console_.get('/admin/keys', cookie)).status).toBe(200);
    clock.set(new Date(clock.current.getTime() + 30 * MINUTE));
    expect((await console_.get('/admin/keys', cookie)).status).toBe(303);
  });

  it('ends a session 12 hours after sign-in however busy it is', async () => {
    clock.set('2026-11-27T10:00:00Z');
    const cookie = await console_.signIn(token);
    for (let minutes = 20; minutes < 12 * 60; minutes += 20) {
      clock.set(new Date(Date.parse('2026-11-27T10:00:00Z') + minutes * MINUTE));
      expect((await console_.get('/admin/audit', cookie)).status).toBe(200);
    }
    clock.set('2026-11-27T22:00:00Z');
    const res = await console_.get('/admin/audit', cookie);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/admin/sign-in?next=%2Fadmin%2Faudit');
  });

  it('ends a session at once when its admin token is revoked', async () => {
    const other = await app.get(AdminTokensService).create('ops-bob', TEST_ACTOR);
    const cookie = await console_.signIn(other.token);
    expect((await console_.get('/admin/', cookie)).status).toBe(200);
    await app.get(AdminTokensService).revoke(other.info.id, TEST_ACTOR);
    expect((await console_.get('/admin/', cookie)).status).toBe(303);
    const { info } = await app.get(ApiKeysService).create({ name: 'kept', plan: 'free' }, TEST_ACTOR);
    const post = await console_.post(`/admin/keys/${info.id}/revoke`, cookie, { confirm: 'yes' });
    expect(post.status).toBe(303);
    expect((await app.get(ApiKeysService).get(info.id))?.revokedAt).toBeNull();
  });

  it('refuses a change from another site with 403 cross_site_request and changes nothing', async () => {
    const cookie = await console_.signIn(token);
    const { info } = await app.get(ApiKeysService).create({ name: 'target', plan: 'free' }, TEST_ACTOR);
    const auditBefore = await app.get(PrismaService).auditEntry.count();
    const attempts = [
      console_
        .agent()
        .post(`/admin/keys/${info.id}/revoke`)
        .set('Cookie', cookie)
        .set('Origin', 'https://evil.example'),
      console_.agent().post(`/admin/keys/${info.id}/revoke`).set('Cookie', cookie),
      console_.agent().post(`/admin/keys/${info.id}/revoke`).set('Cookie', cookie).set('Origin', 'null'),
      console_
        .agent()
        .post(`/admin/keys/${info.id}/revoke`)
        .set('Cookie', cookie)
        .set('Sec-Fetch-Site', 'cross-site')
        .set('Origin', `https://127.0.0.1:${new URL(console_.origin()).port}`),
    ];
    for (const attempt of attempts) {
      const res = await attempt.type('form').send({ confirm: 'yes' });
      expectErrorBody(res, 403, 'cross_site_request');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    }
    const signOut = await console_
      .agent()
      .post('/admin/sign-out')
      .set('Cookie', cookie)
      .set('Origin', 'https://evil.example');
    expectErrorBody(signOut, 403, 'cross_site_request');
    const signIn = await console_
      .agent()
      .post('/admin/sign-in')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send({ token });
    expectErrorBody(signIn, 403, 'cross_site_request');
    expect((await app.get(ApiKeysService).get(info.id))?.revokedAt).toBeNull();
    expect(await app.get(PrismaService).auditEntry.count()).toBe(auditBefore);
    expect((await console_.get('/admin/', cookie)).status).toBe(200);

    // Sec-Fetch-Site: same-origin is the browser's word for the console's own page.
    const same = await console_
      .agent()
      .post(`/admin/keys/${info.id}/revoke`)
      .set('Cookie', cookie)
      .set('Sec-Fetch-Site', 'same-origin')
      .type('form')
      .send({ confirm: 'yes' });
    expect(same.status).toBe(303);
    expect((await app.get(ApiKeysService).get(info.id))?.revokedAt).not.toBeNull();
  });

  it('reads forms only as urlencoded UTF-8 of at most 8 KiB, refused with the Error body', async () => {
    const cookie = await console_.signIn(token);
    const json = await console_
      .agent()
      .post('/admin/keys/new')
      .set('Cookie', cookie)
      .set('Origin', console_.origin())
      .set('Content-Type', 'application/json')
      .send('{"name":"x","plan":"free"}');
    expectErrorBody(json, 415, 'unsupported_media_type');
    const big = await console_.post('/admin/keys/new', cookie, { name: 'x'.repeat(9000), plan: 'free' });
    expectErrorBody(big, 413, 'payload_too_large');
    expect(big.body.message).toBe('A console form must be at most 8192 bytes.');
    expect(await app.get(PrismaService).apiKey.count({ where: { name: 'x' } })).toBe(0);
  });

  it('is served by the admin listener only, never on PORT', async () => {
    for (const path of ['/admin/', '/admin', '/admin/sign-in', '/admin/keys', '/admin/assets/console.js']) {
      expectErrorBody(await request(app.getHttpServer()).get(path), 404, 'route_not_found');
    }
    expectErrorBody(
      await request(app.getHttpServer()).post('/admin/sign-in').type('form').send({ token }),
      404,
      'route_not_found',
    );
  });
});
