import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService } from '../../src/database/prisma.service.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { issueApiKey } from '../support/api-keys.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { postPet } from '../support/idempotency.js';
import { expectErrorBody } from '../support/error-body.js';

/**
 * Hand-made hostile requests, each answered with a clear 4xx (and nothing
 * stored), on both databases: names that PostgreSQL counts longer than a validator that skips
 * variation selectors, values nested thousands deep under a known field, C1 control and
 * bidirectional characters, paths that differ from a route by case, and query parameters on
 * getPet.
 */
describeEachDatabase('hand-made hostile requests get a clear 4xx and store nothing, on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let key: string;
  const clock = new FakeClock();

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { clock });
    key = await issueApiKey(app);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const post = (body: string, idempotencyKey?: string) => postPet(app, key, body, idempotencyKey);
  const petCount = () => app.get(PrismaService).pet.count();

  /** A refusal: 400 validation_failed naming `field` when given, the rate-limit headers, nothing stored. */
  async function expectRefused(body: string, message: RegExp, field?: string, idempotencyKey?: string): Promise<void> {
    const before = await petCount();
    const res = await post(body, idempotencyKey);
    const error = expectErrorBody(res, 400, 'validation_failed', message);
    if (field) expect(error.details).toEqual([{ field, message: expect.stringMatching(message) }]);
    expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(await petCount()).toBe(before);
  }

  describe('names are as long as PostgreSQL counts them: code points, variation selectors included', () => {
    it.each([
      ['"a\\uFE0F" x200 (400 code points)', 'a\uFE0F'.repeat(200)],
      ['"a" x254 + "\\uFE0F" x2 (256)', 'a'.repeat(254) + '\uFE0F'.repeat(2)],
      ['"a" + "\\uFE0E" x255 (256)', 'a' + '\uFE0E'.repeat(255)],
      ['256 astral characters', '\u{1F436}'.repeat(256)],
    ])('refuses %s with 400 naming name', async (_what, name) => {
      await expectRefused(JSON.stringify({ name, categoryId: 1 }), /name must be 1 to 255 characters long/, 'name');
    });

    it.each([
      ['"a" x254 + "\\uFE0F"', 'a'.repeat(254) + '\uFE0F'],
      ['255 astral characters', '\u{1F436}'.repeat(255)],
      ['"e" and 254 combining acute accents', 'e' + '\u0301'.repeat(254)],
    ])('stores %s (255 code points) exactly as sent', async (_what, name) => {
      const res = await post(JSON.stringify({ name, categoryId: 1 }));
      expect(res.status).toBe(201);
      expect(res.body.name).toBe(name);
      const stored = await app.get(PrismaService).pet.findUniqueOrThrow({ where: { id: BigInt(res.body.id) } });
      expect(stored.name).toBe(name);
    });
  });

  describe('nesting is bounded for every body before any library walks it', () => {
    const nested = (depth: number) => `{"name":${'['.repeat(depth)}${']'.repeat(depth)},"categoryId":1}`;

    it.each([1315, 2000, 4930, 8000])('refuses arrays %i deep under name with 400 validation_failed', async (depth) => {
      await expectRefused(nested(depth), /nested too deeply \(at most 32 levels\)/);
      await expectRefused(nested(depth), /nested too deeply/, undefined, `deep-${kind}-${depth}`);
    });

    it('answers what fits in the bound by the field rules (name must be a string)', async () => {
      // The object is one level, so 31 arrays under name make 32.
      await expectRefused(nested(31), /name must be a string/, 'name');
      await expectRefused(nested(32), /nested too deeply/);
    });

    it('counts brackets inside strings as text', async () => {
      const name = `[{${'['.repeat(200)}`;
      const res = await post(JSON.stringify({ name, categoryId: 1 }));
      expect(res.status).toBe(201);
      expect(res.body.name).toBe(name);
    });
  });

  describe('no control characters, no bidirectional controls, something visible', () => {
    const c1 = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(0x80 + i));

    it.each(c1.map((c) => [`U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`, c]))(
      'refuses %s (C1 control) inside a name',
      async (_what, c) => {
        await expectRefused(
          JSON.stringify({ name: `Re${c}x`, categoryId: 1 }),
          /must not contain control characters/,
          'name',
        );
      },
    );

    it.each([
      ['U+202E (right-to-left override)', 'Rex\u202Etxt.exe'],
      ['U+2066 (left-to-right isolate)', '\u2066Rex'],
      ['U+2028 (line separator)', 'Re\u2028x'],
      ['U+0000', 'Re\u0000x'],
      ['a lone surrogate', 'Re\uD800x'],
    ])('refuses %s inside a name', async (_what, name) => {
      await expectRefused(JSON.stringify({ name, categoryId: 1 }), /must not contain control characters/, 'name');
    });

    it.each([
      ['zero-width spaces', '\u200B\u200B'],
      ['a word joiner and a BOM', '\u2060\uFEFF'],
      ['Hangul fillers', '\u3164\u115F'],
      ['combining marks and variation selectors', '\u0301\uFE0F'],
      ['white space of every kind', ' \u00A0\u3000\u2003'],
    ])('refuses a name made only of %s', async (_what, name) => {
      await expectRefused(JSON.stringify({ name, categoryId: 1 }), /name must contain a visible character/, 'name');
    });

    it.each([
      ['an emoji ZWJ sequence', '\u{1F469}\u200D\u{1F4BB}'],
      ['Persian with a zero-width non-joiner', 'می\u200Cخواهم'],
      ['Hebrew with a right-to-left mark', 'רקס\u200F'],
      ['a flag of tag characters', '\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}'],
    ])('stores %s', async (_what, name) => {
      const res = await post(JSON.stringify({ name, categoryId: 1 }));
      expect(res.status).toBe(201);
      expect(res.body.name).toBe(name);
    });
  });

  describe('paths are matched exactly, and getPet takes no query parameters', () => {
    it.each(['/V1/pets', '/v1/PETS', '/V1/pets/1', '/v1/Pets/1'])(
      'answers GET %s with 404 route_not_found and the /v1 headers',
      async (path) => {
        const res = await request(app.getHttpServer()).get(path).set('Authorization', `Bearer ${key}`);
        expectErrorBody(res, 404, 'route_not_found');
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
        expect(res.headers['x-request-id']).toMatch(/\S/);
      },
    );

    it('answers POST /V1/pets with 404 and stores nothing', async () => {
      const before = await petCount();
      const res = await request(app.getHttpServer())
        .post('/V1/pets')
        .set('Authorization', `Bearer ${key}`)
        .set('Content-Type', 'application/json')
        .send('{"name":"Case","categoryId":1}');
      expectErrorBody(res, 404, 'route_not_found');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(await petCount()).toBe(before);
    });

    it('answers getPet with an unknown query parameter with 400 unknown_parameter naming it', async () => {
      const created = await post('{"name":"Query","categoryId":1}');
      expect(created.status).toBe(201);
      const get = (query: string) =>
        request(app.getHttpServer()).get(`/v1/pets/${created.body.id}${query}`).set('Authorization', `Bearer ${key}`);
      const res = await get('?foo=1');
      const error = expectErrorBody(res, 400, 'unknown_parameter', /Unknown parameter: foo/);
      expect(error.details).toEqual([{ field: 'foo', message: 'foo is not an accepted parameter' }]);
      // Still a getPet answer: deprecated, rate limited.
      expect(res.headers.deprecation).toMatch(/^@\d+$/);
      expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
      expectErrorBody(await get('?limit=1&status=sold'), 400, 'unknown_parameter', /Unknown parameters: limit, status/);
      const ok = await get('');
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual(created.body);
    });
  });
});
