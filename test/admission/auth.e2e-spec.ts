import { createHash, createHmac } from 'node:crypto';
import { Controller, Get, Module, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { generateApiKey } from '../../src/api-keys/api-key-format.js';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { AuthMode, declaredAuthMode } from '../../src/auth/auth-mode.js';
import { AuthService } from '../../src/auth/auth.service.js';
import { DEV_KEY_NAME } from '../../src/api-keys/dev-key.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { startTestApp } from '../support/app.js';
import { issueApiKey, TEST_ACTOR } from '../support/api-keys.js';
import { stopCacheClock } from '../support/cache-clock.js';
import { createTestDatabase, databaseKinds, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { waitFor } from '../support/wait-for.js';

const CACHE_TTL_MS = 300;

// Starting an app on a fresh database takes seconds, more on a busy machine.
jest.setTimeout(120_000);

function expect401(res: request.Response, code: 'missing_api_key' | 'invalid_api_key', presented?: string): void {
  expectErrorBody(res, 401, code);
  expect(res.body.details).toBeUndefined();
  expect(res.headers['www-authenticate']).toBe('Bearer realm="animal-store"');
  // The presented credentials are never echoed, not even in part.
  if (presented) expect(res.text).not.toContain(presented.slice(4, 16));
}

/** Every route Nest registered from a controller, with the auth it declares. */
function routes(app: NestExpressApplication): { route: string; mode: AuthMode | undefined }[] {
  const reflector = app.get(Reflector);
  const scanner = new MetadataScanner();
  const found: { route: string; mode: AuthMode | undefined }[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Type<unknown>;
      const proto = controller.prototype as Record<string, unknown>;
      const base = Reflect.getMetadata(PATH_METADATA, controller) as string;
      for (const name of scanner.getAllMethodNames(proto)) {
        const handler = proto[name] as (...args: unknown[]) => unknown;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        if (path === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        found.push({
          route: `${method} /${[base, path].filter((p) => p && p !== '/').join('/')} (${controller.name}.${name})`,
          mode: declaredAuthMode(reflector, handler, controller),
        });
      }
    }
  }
  return found;
}

describeEachDatabase('API key authentication on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let key: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { env: { API_KEY_CACHE_TTL_MS: String(CACHE_TTL_MS) } });
    key = await issueApiKey(app);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const sql = <T = Record<string, unknown>>(query: string, ...params: unknown[]) =>
    app.get(PrismaService).$queryRawUnsafe<T[]>(query, ...params);

  describe('refusals', () => {
    it('answers 401 missing_api_key without an Authorization header, on every operation', async () => {
      expect401(await http().get('/v1/pets'), 'missing_api_key');
      expect401(await http().get('/v1/pets/1'), 'missing_api_key');
      expect401(
        await http().post('/v1/pets').set('Content-Type', 'application/json').send('{"name":"x","categoryId":1}'),
        'missing_api_key',
      );
      expect401(await http().get('/v1/pets').set('Authorization', ''), 'missing_api_key');
    });

    it('refuses before reading the body: no key beats a bad or oversized body', async () => {
      expect401(await http().post('/v1/pets').set('Content-Type', 'text/plain').send('x'), 'missing_api_key');
      const big = JSON.stringify({ name: 'x', categoryId: 1, pad: 'y'.repeat(20_000) });
      expect401(await http().post('/v1/pets').set('Content-Type', 'application/json').send(big), 'missing_api_key');
    });

    const bad: [string, () => string][] = [
      ['another scheme', () => `Basic ${Buffer.from(`user:${key}`).toString('base64')}`],
      ['the key without a scheme', () => key],
      ['the scheme without a key', () => 'Bearer'],
      ['two tokens', () => `Bearer ${key} ${key}`],
      ['a malformed key', () => 'Bearer ask_not-a-key'],
      ['a key of another service', () => `Bearer ghp_${key.slice(4)}`],
      ['a truncated key', () => `Bearer ${key.slice(0, -1)}`],
      [
        'a mistyped key (bad checksum)',
        () => `Bearer ${key.slice(0, 10)}${key[10] === 'a' ? 'b' : 'a'}${key.slice(11)}`,
      ],
      ['an unknown key with a valid checksum', () => `Bearer ${generateApiKey()}`],
    ];
    it.each(bad)('answers 401 invalid_api_key for %s', async (_what, header) => {
      const value = header();
      expect401(await http().get('/v1/pets').set('Authorization', value), 'invalid_api_key', key);
    });

    it('answers 401 invalid_api_key for a revoked key, at once when revoked in this process', async () => {
      const revoked = await issueApiKey(app, { name: 'to revoke' });
      expect((await http().get('/v1/pets').set('Authorization', `Bearer ${revoked}`)).status).toBe(200);
      const keys = app.get(ApiKeysService);
      const row = (await keys.list()).find((k) => k.name === 'to revoke')!;
      expect(await keys.revoke(row.id, TEST_ACTOR)).toMatchObject({ alreadyRevoked: false });
      expect401(await http().get('/v1/pets').set('Authorization', `Bearer ${revoked}`), 'invalid_api_key', revoked);
    });
  });

  describe('acceptance', () => {
    it.each(['Bearer', 'bearer', 'BEARER'])('accepts a valid key with the scheme written %s', async (scheme) => {
      const res = await http().get('/v1/pets').set('Authorization', `${scheme} ${key}`);
      expect(res.status).toBe(200);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(Array.isArray(res.body)).toBe(true);
    });

    it('lets a valid key create and read an animal', async () => {
      const created = await http()
        .post('/v1/pets')
        .set('Authorization', `Bearer ${key}`)
        .set('Content-Type', 'application/json')
        .send('{"name":"Keyed","categoryId":4}');
      expect(created.status).toBe(201);
      const back = await http().get(`/v1/pets/${created.body.id}`).set('Authorization', `bearer ${key}`);
      expect(back.body).toEqual(created.body);
    });

    it('records last use in last_used_at, without delaying the request', async () => {
      const fresh = await issueApiKey(app, { name: 'last used' });
      const [before] = await sql<{ last_used_at: Date | null }>(
        `SELECT last_used_at FROM api_keys WHERE name = 'last used'`,
      );
      expect(before.last_used_at).toBeNull();
      expect((await http().get('/v1/pets').set('Authorization', `Bearer ${fresh}`)).status).toBe(200);
      // Recorded after the answer, so it is awaited (the answer above did not wait for it).
      const after = await waitFor(
        async () =>
          (await sql<{ last_used_at: Date | null }>(`SELECT last_used_at FROM api_keys WHERE name = 'last used'`))[0]
            .last_used_at,
        { what: 'last_used_at of the key to be recorded' },
      );
      expect(after).toBeInstanceOf(Date);
    });
  });

  describe('freshness', () => {
    it(`refuses a key revoked elsewhere (another instance, the key tool) within the cache TTL (${CACHE_TTL_MS} ms here; under 5 s always)`, async () => {
      // The cache's clock stands still but for the TTL the test moves it on: the refusal must
      // come by then, however long the machine takes (a longer TTL would never let it come).
      const cache = stopCacheClock();
      try {
        const other = await issueApiKey(app, { name: 'revoked elsewhere' });
        const auth = { Authorization: `Bearer ${other}` };
        expect((await http().get('/v1/pets').set(auth)).status).toBe(200);
        // A direct UPDATE, as another process would do it: this process's cache is not told.
        await sql(`UPDATE api_keys SET revoked_at = now() WHERE name = 'revoked elsewhere'`);
        cache.advance(CACHE_TTL_MS + 1);
        const refused = await waitFor(
          async () => ((res) => (res.status === 200 ? undefined : res))(await http().get('/v1/pets').set(auth)),
          { what: 'the key revoked elsewhere to be refused' },
        );
        expect401(refused, 'invalid_api_key', other);
      } finally {
        cache.restore();
      }
    });

    it('serves a hot key from the in-process cache, without a database lookup per request', async () => {
      const keys = app.get(ApiKeysService);
      const hot = await issueApiKey(app, { name: 'hot' });
      const lookups = jest.spyOn(keys, 'findByHash');
      // Ten requests within one TTL, however long they take: the cache's clock stands still.
      const cache = stopCacheClock();
      try {
        for (let i = 0; i < 10; i++)
          expect((await http().get('/v1/pets?limit=1').set('Authorization', `Bearer ${hot}`)).status).toBe(200);
        expect(lookups).toHaveBeenCalledTimes(1);
      } finally {
        cache.restore();
        lookups.mockRestore();
      }
    });
  });

  describe('polling changed keys', () => {
    it('keeps a hot key cached past the TTL while polls run: recording its use is not a change', async () => {
      const keys = app.get(ApiKeysService);
      const auth = app.get(AuthService);
      const hot = await issueApiKey(app, { name: 'hot past the TTL' });
      const lookups = jest.spyOn(keys, 'findByHash');
      const cache = stopCacheClock();
      try {
        // The app's first poll only learns the database's clock; this one makes sure it has run.
        await auth.pollChanges();
        expect((await http().get('/v1/pets?limit=1').set('Authorization', `Bearer ${hot}`)).status).toBe(200);
        // last_used_at is written after the answer; wait for it, then for a poll after it.
        await waitFor(
          async () =>
            (
              await sql<{ last_used_at: Date | null }>(
                `SELECT last_used_at FROM api_keys WHERE name = 'hot past the TTL'`,
              )
            )[0].last_used_at,
          { what: 'last_used_at of the key to be recorded' },
        );
        for (let i = 0; i < 3; i++) {
          cache.advance(CACHE_TTL_MS + 1);
          await auth.pollChanges();
          expect((await http().get('/v1/pets?limit=1').set('Authorization', `Bearer ${hot}`)).status).toBe(200);
        }
        expect(lookups).toHaveBeenCalledTimes(1);
      } finally {
        cache.restore();
        lookups.mockRestore();
      }
    });

    it('refuses a key re-planned or revoked by another process once a poll reports it, however long it was cached', async () => {
      const auth = app.get(AuthService);
      const other = await issueApiKey(app, { name: 'changed by another process', plan: 'free' });
      const cache = stopCacheClock();
      try {
        const first = await http().get('/v1/pets').set('Authorization', `Bearer ${other}`);
        expect(first.headers['x-ratelimit-limit']).toBe('60');
        await auth.pollChanges();
        await sql(`UPDATE api_keys SET plan = 'pro' WHERE name = 'changed by another process'`);
        await auth.pollChanges();
        expect(
          (await http().get('/v1/pets').set('Authorization', `Bearer ${other}`)).headers['x-ratelimit-limit'],
        ).toBe('300');
        await sql(`UPDATE api_keys SET revoked_at = now() WHERE name = 'changed by another process'`);
        await auth.pollChanges();
        expect401(await http().get('/v1/pets').set('Authorization', `Bearer ${other}`), 'invalid_api_key', other);
      } finally {
        cache.restore();
      }
    });
  });

  describe('public routes', () => {
    it('serve health, readiness and the documents without a key, and ignore a bad one', async () => {
      for (const path of ['/healthz', '/readyz', '/openapi.json']) {
        expect((await http().get(path)).status).toBe(200);
        expect((await http().get(path).set('Authorization', 'Bearer nonsense')).status).toBe(200);
      }
      expect((await http().get('/docs').redirects(1)).status).toBe(200);
    });
  });

  describe('declared auth', () => {
    it('every route declares @Public() or @ApiKeyAuth(), and every /v1 route needs a key but the leak report', () => {
      const all = routes(app);
      expect(all.length).toBeGreaterThanOrEqual(5);
      expect(all.filter((r) => r.mode === undefined).map((r) => r.route)).toEqual([]);
      // Whoever holds a leaked key may report it without a key of their own (docs/api-keys.md).
      const publicV1 = ['POST /v1/credentials/revoke'];
      for (const r of all) {
        if (!/ \/v1\//.test(r.route)) continue;
        const open = publicV1.some((p) => r.route.startsWith(`${p} `));
        expect(r).toEqual({ route: r.route, mode: open ? 'public' : 'api-key' });
      }
    });

    it('documents bearer security and the 401 on every operation of the OpenAPI document, and the scope each needs with its 403', async () => {
      const doc = (await http().get('/openapi.json')).body;
      expect(doc.components.securitySchemes.bearer).toEqual(
        expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'API key' }),
      );
      const ops = Object.values(
        doc.paths as Record<
          string,
          Record<
            string,
            {
              operationId: string;
              security?: unknown;
              responses: Record<string, unknown>;
              'x-required-scopes'?: unknown;
            }
          >
        >,
      ).flatMap((item) => Object.values(item));
      const scopes = Object.fromEntries(ops.map((op) => [op.operationId, op['x-required-scopes']]));
      expect(scopes).toEqual({
        listPets: ['pets:read'],
        getPet: ['pets:read'],
        createPet: ['pets:write'],
        getRateLimit: undefined,
        revokeCredentials: undefined,
      });
      for (const op of ops) {
        if (op.operationId === 'revokeCredentials') {
          expect(op.security).toEqual([]);
          continue;
        }
        expect(op.security).toEqual([{ bearer: [] }]);
        expect(op.responses['401']).toBeDefined();
        expect(op.responses['403'] !== undefined).toBe(op['x-required-scopes'] !== undefined);
      }
    });
  });

  describe('storage', () => {
    it('holds no secret: only a SHA-256 of the key and a short display prefix', async () => {
      const rows = await sql<{ row: string; hash: string; prefix: string }>(
        `SELECT row_to_json(k)::text AS row, hash, prefix FROM api_keys k`,
      );
      expect(rows.length).toBeGreaterThan(0);
      for (const { row } of rows) expect(row).not.toContain(key.slice(12, 24));
      const mine = rows.find((r) => r.hash === createHash('sha256').update(key).digest('hex'));
      expect(mine).toBeDefined();
      expect(mine!.prefix).toBe(key.slice(0, 12));
      // Nor anywhere else in the database: every row of every table, as text.
      const tables = await sql<{ name: string }>(
        `SELECT quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
      );
      expect(tables.map((t) => t.name)).toContain('api_keys');
      for (const { name } of tables) {
        const [{ hits }] = await sql<{ hits: number }>(
          `SELECT count(*)::int AS hits FROM ${name} t WHERE strpos(row_to_json(t)::text, $1) > 0`,
          key.slice(12),
        );
        expect({ table: name, hits }).toEqual({ table: name, hits: 0 });
      }
    });
  });
});

describeEachDatabase('a fresh instance on %s', (kind) => {
  let db: TestDatabase;
  const apps: NestExpressApplication[] = [];
  const start = async () => {
    const app = await startTestApp(db, { env: { API_KEY_CACHE_TTL_MS: String(CACHE_TTL_MS) } });
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await db?.drop();
  });

  it('serves the keys used in the last hour without a lookup, and drops one changed since like any cached key', async () => {
    // The instance before: keys issued, some used (as any instance records it, in last_used_at).
    const before = await start();
    const issue = (name: string) => issueApiKey(before, { name });
    const [used, idle, revoked, unused, rolled] = [
      await issue('used'),
      await issue('idle'),
      await issue('revoked'),
      await issue('unused'),
      await issue('rolled'),
    ];
    const sql = (app: NestExpressApplication, query: string) => app.get(PrismaService).$queryRawUnsafe(query);
    await sql(before, `UPDATE api_keys SET last_used_at = now() WHERE name IN ('used', 'revoked', 'rolled')`);
    await sql(before, `UPDATE api_keys SET last_used_at = now() - interval '2 hours' WHERE name = 'idle'`);
    await sql(before, `UPDATE api_keys SET revoked_at = now() WHERE name = 'revoked'`);
    const [{ id }] = (await sql(before, `SELECT id FROM api_keys WHERE name = 'rolled'`)) as { id: bigint }[];
    const { key: rolledNew } = (await before.get(ApiKeysService).roll(BigInt(id), 3_600_000, TEST_ACTOR))!;
    await before.close();
    apps.splice(apps.indexOf(before), 1);

    const app = await start();
    const lookups = jest.spyOn(app.get(ApiKeysService), 'findByHash');
    const cache = stopCacheClock();
    try {
      const status = async (key: string) =>
        (await request(app.getHttpServer()).get('/v1/pets?limit=1').set('Authorization', `Bearer ${key}`)).status;
      // Used in the last hour: cached at start, both secrets of the rolled key within its overlap.
      for (const key of [used, rolled, rolledNew]) expect(await status(key)).toBe(200);
      expect(lookups).toHaveBeenCalledTimes(0);
      // Not used in the last hour, never used, revoked: looked up on the first request.
      expect(await status(idle)).toBe(200);
      expect(await status(unused)).toBe(200);
      expect(await status(revoked)).toBe(401);
      expect(lookups).toHaveBeenCalledTimes(3);

      // Revoked by another process after the instance started: the next poll reports it.
      await sql(app, `UPDATE api_keys SET revoked_at = now() WHERE name = 'used'`);
      await app.get(AuthService).pollChanges();
      expect401(
        await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${used}`),
        'invalid_api_key',
        used,
      );
    } finally {
      cache.restore();
      lookups.mockRestore();
    }
  });
});

describe('with API_KEY_PEPPER', () => {
  const pepper = 'a-pepper-of-at-least-32-characters!!';
  let db: TestDatabase;
  let app: NestExpressApplication;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { env: { API_KEY_PEPPER: pepper } });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('stores HMAC-SHA256 of the key and authenticates with it', async () => {
    const key = await issueApiKey(app);
    const [row] = await app.get(PrismaService).$queryRawUnsafe<{ hash: string }[]>('SELECT hash FROM api_keys');
    expect(row.hash).toBe(createHmac('sha256', pepper).update(key).digest('hex'));
    expect(row.hash).not.toBe(createHash('sha256').update(key).digest('hex'));
    expect((await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key}`)).status).toBe(200);
  });
});

@Controller('v1/undeclared')
class UndeclaredController {
  @Get()
  get(): { ok: true } {
    return { ok: true };
  }
}

@Module({ controllers: [UndeclaredController] })
class UndeclaredModule {}

describe('a route that declares no auth', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { imports: [UndeclaredModule] });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('is found by the route check, and still needs a key (deny by default)', async () => {
    expect(
      routes(app)
        .filter((r) => r.mode === undefined)
        .map((r) => r.route),
    ).toEqual(['GET /v1/undeclared (UndeclaredController.get)']);
    expect401(await request(app.getHttpServer()).get('/v1/undeclared'), 'missing_api_key');
    const key = await issueApiKey(app);
    expect(
      (await request(app.getHttpServer()).get('/v1/undeclared').set('Authorization', `Bearer ${key}`)).status,
    ).toBe(200);
  });
});

describe('first run on the embedded default', () => {
  let db: TestDatabase;
  let printed: string;
  let write: jest.SpyInstance;

  beforeAll(async () => {
    db = await createTestDatabase('embedded', { migrate: false }); // an empty DATA_DIR
  });
  beforeEach(() => {
    printed = '';
    write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed += chunk.toString();
      return true;
    });
  });
  afterEach(() => write.mockRestore());
  afterAll(async () => db?.drop());

  it('issues one development key, prints it once, and never again', async () => {
    const env = { NODE_ENV: 'development' };
    let app = await startTestApp(db, { env });
    let devKey: string;
    try {
      devKey = /(ask_[0-9A-Za-z]{49})/.exec(printed)![1];
      expect(printed).toMatch(/for local use only/);
      const keys = await app.get(ApiKeysService).list();
      expect(keys).toEqual([expect.objectContaining({ name: DEV_KEY_NAME, plan: 'free', revokedAt: null })]);
      expect((await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${devKey}`)).status).toBe(
        200,
      );
    } finally {
      await app.close();
    }
    printed = '';
    app = await startTestApp(db, { env });
    try {
      expect(printed).not.toMatch(/ask_/);
      expect(await app.get(ApiKeysService).count()).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('issues none in test or production, nor on PostgreSQL', async () => {
    const fresh = await createTestDatabase('embedded', { migrate: false });
    try {
      for (const NODE_ENV of ['test', 'production']) {
        const app = await startTestApp(fresh, {
          env: {
            NODE_ENV,
            LOG_LEVEL: 'silent',
            METRICS_TOKEN: 'metrics-token-0123456789',
            API_KEY_CHECKSUM_SECRET: 'c'.repeat(32),
          },
        });
        try {
          expect(await app.get(ApiKeysService).count()).toBe(0);
        } finally {
          await app.close();
        }
      }
    } finally {
      await fresh.drop();
    }
    if (databaseKinds().includes('postgres')) {
      const pgdb = await createTestDatabase('postgres');
      try {
        const app = await startTestApp(pgdb, { env: { NODE_ENV: 'development' } });
        try {
          expect(await app.get(ApiKeysService).count()).toBe(0);
        } finally {
          await app.close();
        }
      } finally {
        await pgdb.drop();
      }
    }
    expect(printed).not.toMatch(/ask_/);
  });
});
