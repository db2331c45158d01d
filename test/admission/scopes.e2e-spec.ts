import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { startTestApp } from '../support/app.js';
import { issueApiKey, TEST_ACTOR } from '../support/api-keys.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { postPet } from '../support/idempotency.js';
import { expectErrorBody } from '../support/error-body.js';
import { waitFor } from '../support/wait-for.js';

// Starting an app on a fresh database takes seconds, more on a busy machine.
jest.setTimeout(120_000);

/** The bound docs/api-keys.md promises for a change of a key to reach every instance. */
const CHANGE_REACHES_INSTANCES_MS = 5_000;

const WRITE_CHALLENGE = 'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"';
const PET = JSON.stringify({ name: 'Rex', categoryId: 7 });

function expect403(res: request.Response, scope: string): void {
  expectErrorBody(res, 403, 'insufficient_scope', new RegExp(`lacks the scope ${scope}`));
  expect(res.headers['www-authenticate']).toBe(
    `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`,
  );
}

describeEachDatabase('API key scopes on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const sql = <T = Record<string, unknown>>(query: string, ...params: unknown[]) =>
    app.get(PrismaService).$queryRawUnsafe<T[]>(query, ...params);
  const count = async (table: string) => Number((await sql<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`))[0].n);
  const create = (key: string, body = PET, idempotencyKey?: string) => postPet(app, key, body, idempotencyKey);

  it('lets a read-only key list and get, and refuses its create 403 insufficient_scope with nothing stored', async () => {
    const full = await issueApiKey(app);
    const reader = await issueApiKey(app, { name: 'catalogue page', scopes: ['pets:read'] });
    const created = await create(full);
    expect(created.status).toBe(201);
    const listed = await http().get('/v1/pets').set('Authorization', `Bearer ${reader}`);
    expect(listed.status).toBe(200);
    expect(listed.body).toContainEqual(created.body);
    const got = await http().get(`/v1/pets/${created.body.id}`).set('Authorization', `Bearer ${reader}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);

    const [pets, records] = [await count('pets'), await count('idempotency_keys')];
    const refused = await create(reader, PET, 'order-1');
    expect403(refused, 'pets:write');
    expect(refused.headers['www-authenticate']).toBe(WRITE_CHALLENGE);
    // Counted against the key like any of its requests.
    expect(refused.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    // Refused before the body is read or the Idempotency-Key recorded: a body that would be a
    // 400, 413 or 415 still gets the 403.
    expect403(await create(reader, '{"name":', 'order-2'), 'pets:write');
    expect403(
      await create(reader, JSON.stringify({ name: 'x', categoryId: 1, pad: 'y'.repeat(20_000) })),
      'pets:write',
    );
    expect403(
      await http()
        .post('/v1/pets')
        .set('Authorization', `Bearer ${reader}`)
        .set('Content-Type', 'text/plain')
        .send('x'),
      'pets:write',
    );
    expect([await count('pets'), await count('idempotency_keys')]).toEqual([pets, records]);
    // The quota needs no scope.
    expect((await http().get('/v1/rate_limit').set('Authorization', `Bearer ${reader}`)).status).toBe(200);
  });

  it('lets a write-only key create, and refuses its reads 403 naming pets:read', async () => {
    const writer = await issueApiKey(app, { name: 'importer', scopes: ['pets:write'] });
    const created = await create(writer);
    expect(created.status).toBe(201);
    expect403(await http().get('/v1/pets').set('Authorization', `Bearer ${writer}`), 'pets:read');
    expect403(await http().get(`/v1/pets/${created.body.id}`).set('Authorization', `Bearer ${writer}`), 'pets:read');
  });

  it('gives keys issued before scopes existed, and keys issued without --scopes, both scopes', async () => {
    const key = await issueApiKey(app, { name: 'default scopes' });
    const [row] = await sql<{ scopes: string[] }>(`SELECT scopes FROM api_keys WHERE name = 'default scopes'`);
    expect(row.scopes).toEqual(['pets:read', 'pets:write']);
    // A row as the migration leaves an older key: the column's default.
    const [dflt] = await sql<{ d: string }>(
      `SELECT column_default AS d FROM information_schema.columns WHERE table_name = 'api_keys' AND column_name = 'scopes'`,
    );
    expect(dflt.d).toMatch(/pets:read.*pets:write/);
    expect((await create(key)).status).toBe(201);
    // The database refuses a scope the service does not know.
    await expect(
      sql(`UPDATE api_keys SET scopes = ARRAY['pets:delete'] WHERE name = 'default scopes'`),
    ).rejects.toThrow(/api_keys_scopes_known/);
  });

  it(`applies a change of scopes made by another process within ${CHANGE_REACHES_INSTANCES_MS} ms`, async () => {
    const key = await issueApiKey(app, { name: 'changed elsewhere' });
    // An invalid body: 400 while the key may write, 403 once it may not; nothing is ever stored.
    expectErrorBody(await create(key, '{}'), 400, 'validation_failed');
    // A direct UPDATE, as the key tool in another process makes it: this process is not told.
    await sql(`UPDATE api_keys SET scopes = ARRAY['pets:read'] WHERE name = 'changed elsewhere'`);
    const refused = await waitFor(
      async () => ((res) => (res.status === 403 ? res : undefined))(await create(key, '{}')),
      { what: 'the narrowed key to be refused', timeoutMs: CHANGE_REACHES_INSTANCES_MS },
    );
    expect403(refused, 'pets:write');
    await sql(`UPDATE api_keys SET scopes = ARRAY['pets:read', 'pets:write'] WHERE name = 'changed elsewhere'`);
    await waitFor(async () => (await create(key, '{}')).status === 400, {
      what: 'the widened key to be let through',
      timeoutMs: CHANGE_REACHES_INSTANCES_MS,
    });
  });
});

describe('a change of scopes reaching two instances that share PostgreSQL', () => {
  const run = Boolean(process.env.DATABASE_URL);
  let db: TestDatabase;
  let apps: NestExpressApplication[] = [];

  beforeAll(async () => {
    if (!run) return;
    db = await createTestDatabase('postgres');
    apps = [await startTestApp(db), await startTestApp(db)];
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await db?.drop();
  });

  (run ? it : it.skip)(
    `is applied by every instance within ${CHANGE_REACHES_INSTANCES_MS} ms, through the key tool's service on one of them`,
    async () => {
      const [a, b] = apps;
      const key = await issueApiKey(a, { name: 'shared' });
      const post = (app: NestExpressApplication) =>
        request(app.getHttpServer())
          .post('/v1/pets')
          .set('Authorization', `Bearer ${key}`)
          .set('Content-Type', 'application/json')
          .send('{}');
      // Both instances cache the key with both scopes.
      for (const app of apps) expectErrorBody(await post(app), 400, 'validation_failed');
      const keys = a.get(ApiKeysService);
      const [row] = (await keys.list()).filter((k) => k.name === 'shared');
      expect(await keys.setScopes(row.id, ['pets:read'], TEST_ACTOR)).toMatchObject({ scopes: ['pets:read'] });
      for (const app of [a, b]) {
        const refused = await waitFor(async () => ((res) => (res.status === 403 ? res : undefined))(await post(app)), {
          what: 'the narrowed key to be refused',
          timeoutMs: CHANGE_REACHES_INSTANCES_MS,
        });
        expect403(refused, 'pets:write');
      }
    },
  );
});
