import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { expectErrorBody } from '../support/error-body.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { issueApiKey } from '../support/api-keys.js';
import { newPet } from '../factories/pet.factory.js';

const BASE = 'https://api.example.test/v1';

/** Raw JSON text of a response, for checks that JSON.parse would blur (int64). */
function raw(res: request.Response): string {
  return res.text;
}

describeEachDatabase('pets API on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  const clock = new FakeClock();
  // Every request carries a valid API key (the 401 cases are in test/admission/auth.e2e-spec.ts).
  let http: ReturnType<typeof request.agent>;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { clock });
    http = request.agent(app.getHttpServer()).set('Authorization', `Bearer ${await issueApiKey(app)}`);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const post = (body: unknown) =>
    http
      .post('/v1/pets')
      .set('Content-Type', 'application/json')
      .send(typeof body === 'string' ? body : JSON.stringify(body));

  describe('createPet', () => {
    it('stores the animal, defaults status to available and answers 201 with Location', async () => {
      const res = await post({ name: 'Rex', categoryId: 3 });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 3, status: 'available' });
      expect(res.headers.location).toBe(`${BASE}/pets/${res.body.id}`);
      const back = await http.get(`/v1/pets/${res.body.id}`);
      expect(back.body).toEqual(res.body);
    });

    it('keeps int64 categoryId exact at the edges of double precision and int64', async () => {
      for (const big of ['9223372036854775807', '9007199254740993', '9007199254740992', '1']) {
        const res = await post(`{"name":"Big","categoryId":${big},"status":"pending"}`);
        expect(res.status).toBe(201);
        expect(raw(res)).toContain(`"categoryId":${big},`);
        const id = /"id":(\d+)/.exec(raw(res))![1];
        const back = await http.get(`/v1/pets/${id}`);
        expect(raw(back)).toBe(raw(res));
      }
    });

    it.each([
      ['missing name', { categoryId: 1 }, 'name'],
      ['missing categoryId', { name: 'x' }, 'categoryId'],
      ['empty name', { name: '', categoryId: 1 }, 'name'],
      ['blank name', { name: ' \t ', categoryId: 1 }, 'name'],
      ['long name', { name: 'x'.repeat(256), categoryId: 1 }, 'name'],
      ['NUL in name', { name: 'a\u0000b', categoryId: 1 }, 'name'],
      ['non-string name', { name: 5, categoryId: 1 }, 'name'],
      ['string categoryId', { name: 'x', categoryId: '5' }, 'categoryId'],
      ['boolean categoryId', { name: 'x', categoryId: true }, 'categoryId'],
      ['zero categoryId', { name: 'x', categoryId: 0 }, 'categoryId'],
      ['negative categoryId', { name: 'x', categoryId: -1 }, 'categoryId'],
      ['fractional categoryId', { name: 'x', categoryId: 1.5 }, 'categoryId'],
      ['null status', { name: 'x', categoryId: 1, status: null }, 'status'],
      ['unknown status', { name: 'x', categoryId: 1, status: 'lost' }, 'status'],
      ['id in body', { name: 'x', categoryId: 1, id: 5 }, 'id'],
      ['unknown field', { name: 'x', categoryId: 1, colour: 'red' }, 'colour'],
    ])('refuses %s with 400 naming the field', async (_what, body, field) => {
      const res = await post(body);
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });

    it('refuses categoryId beyond int64 and numbers that are not exactly integers', async () => {
      for (const text of ['9223372036854775808', '1e400', '1e19', '9007199254740993.5e0', '9223372036854775806.9']) {
        const res = await post(`{"name":"x","categoryId":${text}}`);
        expectErrorBody(res, 400, 'validation_failed');
      }
    });

    it('reads an integer written with a fraction or an exponent exactly, at any size', async () => {
      for (const [text, exact] of [
        ['9007199254740993.0e0', '9007199254740993'],
        ['1e16', '10000000000000000'],
      ]) {
        const res = await post(`{"name":"x","categoryId":${text}}`);
        expect(res.status).toBe(201);
        expect(res.text).toContain(`"categoryId":${exact}`);
      }
    });

    it('refuses name of 255 characters only when longer; 255 astral characters fit', async () => {
      const res = await post({ name: '🐕'.repeat(255), categoryId: 1 });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('🐕'.repeat(255));
    });

    it('answers 400 malformed_json for broken JSON, duplicate keys and invalid UTF-8', async () => {
      expectErrorBody(await post('{"name":'), 400, 'malformed_json');
      expectErrorBody(await post('{"name":"a","name":"b","categoryId":1}'), 400, 'malformed_json');
      const bad = Buffer.concat([
        Buffer.from('{"name":"'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('","categoryId":1}'),
      ]);
      const sent = http
        .post('/v1/pets')
        .set('Content-Type', 'application/json')
        .serialize((b: unknown) => b as string);
      expectErrorBody(await sent.send(bad), 400, 'malformed_json');
    });

    it('answers 400 when the body is not an object or is missing', async () => {
      expectErrorBody(await post('[1,2]'), 400, 'validation_failed');
      expectErrorBody(await post('"x"'), 400, 'validation_failed');
      expectErrorBody(await post('null'), 400, 'validation_failed');
      expectErrorBody(await http.post('/v1/pets'), 400, 'validation_failed');
    });

    it('answers 415 for a body that is not application/json', async () => {
      const res = await http.post('/v1/pets').set('Content-Type', 'text/plain').send('{"name":"x","categoryId":1}');
      expectErrorBody(res, 415, 'unsupported_media_type');
      const latin = await http
        .post('/v1/pets')
        .set('Content-Type', 'application/json; charset=latin1')
        .send('{"name":"x","categoryId":1}');
      expectErrorBody(latin, 415, 'unsupported_media_type');
    });

    it('refuses a query parameter, which createPet takes none of, and stores nothing', async () => {
      const before = await http.get('/v1/pets?limit=100');
      const res = await http
        .post('/v1/pets?status=sold')
        .set('Content-Type', 'application/json')
        .set('Idempotency-Key', '"query-refused"')
        .send(JSON.stringify({ name: 'Rex', categoryId: 3 }));
      expectErrorBody(res, 400, 'unknown_parameter', /status/);
      const after = await http.get('/v1/pets?limit=100');
      expect(after.body).toEqual(before.body);
      // The refusal leaves the Idempotency-Key free for the corrected request.
      const retried = await http
        .post('/v1/pets')
        .set('Content-Type', 'application/json')
        .set('Idempotency-Key', '"query-refused"')
        .send(JSON.stringify({ name: 'Rex', categoryId: 3 }));
      expect(retried.status).toBe(201);
      expect(retried.headers['idempotent-replayed']).toBeUndefined();
    });

    it('answers 413 for a body over 16 KiB and stores nothing', async () => {
      const before = await http.get('/v1/pets?limit=100');
      const res = await post({ name: 'x', categoryId: 1, pad: 'y'.repeat(17 * 1024) });
      expectErrorBody(res, 413, 'payload_too_large');
      const after = await http.get('/v1/pets?limit=100');
      expect(after.body).toEqual(before.body);
    });

    it('refuses __proto__ and constructor keys without touching prototypes', async () => {
      const res = await post('{"name":"x","categoryId":1,"__proto__":{"polluted":true}}');
      expectErrorBody(res, 400, 'validation_failed');
      expect(res.body.details).toEqual([expect.objectContaining({ field: '__proto__' })]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expectErrorBody(
        await post('{"name":"x","categoryId":1,"constructor":{"prototype":{}}}'),
        400,
        'validation_failed',
      );
    });
  });

  describe('listPets', () => {
    beforeAll(async () => {
      for (let i = 0; i < 25; i++) {
        await post(newPet({ status: i % 3 === 0 ? 'sold' : 'available' }));
      }
    });

    it('returns at most 20 animals ordered by id by default', async () => {
      const res = await http.get('/v1/pets');
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body).toHaveLength(20);
      const ids = res.body.map((p: { id: number }) => p.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    });

    it('honours limit and status', async () => {
      const res = await http.get('/v1/pets?limit=5&status=sold');
      expect(res.body).toHaveLength(5);
      for (const pet of res.body) expect(pet.status).toBe('sold');
      const none = await http.get('/v1/pets?status=pending&limit=100');
      for (const pet of none.body) expect(pet.status).toBe('pending');
    });

    it('pages through everything with the Link rel="next" cursor, without repeats', async () => {
      const all = (await http.get('/v1/pets?limit=100')).body as { id: number }[];
      const seen: number[] = [];
      let next: string | undefined = '/v1/pets?limit=7';
      let pages = 0;
      while (next) {
        const res = await http.get(next);
        expect(res.status).toBe(200);
        seen.push(...res.body.map((p: { id: number }) => p.id));
        const link = res.headers.link as string | undefined;
        if (link) {
          const m = /^<([^>]+)>; rel="next"$/.exec(link);
          expect(m).not.toBeNull();
          expect(m![1].startsWith(`${BASE}/pets?`)).toBe(true);
          next = m![1].slice(BASE.length - 3); // keep /v1/...
        } else {
          next = undefined;
        }
        pages += 1;
      }
      expect(seen).toEqual(all.map((p) => p.id));
      expect(pages).toBe(Math.ceil(all.length / 7));
    });

    it('keeps the status filter in the next link', async () => {
      const res = await http.get('/v1/pets?limit=2&status=available');
      expect(res.headers.link).toMatch(/status=available/);
      expect(res.headers.link).toMatch(/limit=2/);
    });

    it.each([
      ['limit=0', 'invalid_parameter', 'limit'],
      ['limit=101', 'invalid_parameter', 'limit'],
      ['limit=abc', 'invalid_parameter', 'limit'],
      ['limit=1.5', 'invalid_parameter', 'limit'],
      ['limit=', 'invalid_parameter', 'limit'],
      ['limit=5&limit=6', 'invalid_parameter', 'limit'],
      ['status=lost', 'invalid_parameter', 'status'],
      ['status=available&status=sold', 'invalid_parameter', 'status'],
      ['cursor=nonsense!', 'invalid_parameter', 'cursor'],
      ['cursor=cDEuMA', 'invalid_parameter', 'cursor'],
      ['limt=5', 'unknown_parameter', 'limt'],
      ['__proto__=1', 'unknown_parameter', '__proto__'],
    ])('answers 400 for %s', async (query, code, field) => {
      const res = await http.get(`/v1/pets?${query}`);
      expectErrorBody(res, 400, code);
      expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    });
  });

  describe('getPet', () => {
    it('returns the animal with Deprecation, Sunset and successor Link headers', async () => {
      const created = await post({ name: 'Old', categoryId: 2, status: 'pending' });
      const res = await http.get(`/v1/pets/${created.body.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created.body);
      expect(res.headers.deprecation).toMatch(/^@\d+$/);
      expect(res.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
      expect(res.headers.link).toBe(`<${BASE}/pets>; rel="successor-version"`);
    });

    it('carries the deprecation headers on refusals before the handler (401), also for HEAD, and only on getPet', async () => {
      const anonymous = request(app.getHttpServer());
      const refused = await anonymous.get('/v1/pets/1');
      expectErrorBody(refused, 401, 'missing_api_key');
      expect(refused.headers).toMatchObject({
        deprecation: expect.stringMatching(/^@\d+$/),
        sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
        link: `<${BASE}/pets>; rel="successor-version"`,
      });
      const head = await http.head('/v1/pets/1');
      expect(head.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
      for (const res of [
        await http.get('/v1/pets'),
        await anonymous.get('/v1/pets'),
        await post({ name: 'New', categoryId: 1 }),
      ]) {
        expect(res.headers.deprecation).toBeUndefined();
        expect(res.headers.sunset).toBeUndefined();
      }
    });

    it('answers 404 not_found for an id that does not exist, with the deprecation headers', async () => {
      const res = await http.get('/v1/pets/9223372036854775807');
      expectErrorBody(res, 404, 'not_found');
      expect(res.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    });

    it.each(['0', '-1', 'abc', '1.5', '9223372036854775808', '01', '%20'])('answers 400 for petId %s', async (id) => {
      const res = await http.get(`/v1/pets/${id}`);
      expectErrorBody(res, 400, 'invalid_parameter');
      expect(res.headers.deprecation).toBeDefined();
    });

    it('answers 410 gone from the sunset instant on', async () => {
      try {
        clock.set('2030-12-04T23:59:59.999Z');
        expect((await http.get('/v1/pets/1')).status).not.toBe(410);
        clock.set('2030-12-05T00:00:00Z');
        const res = await http.get('/v1/pets/1');
        expectErrorBody(res, 410, 'gone');
        expect(res.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
      } finally {
        clock.set('2026-11-22T12:00:00Z');
      }
    });
  });

  describe('errors from routing', () => {
    it('answers 404 route_not_found for unknown paths', async () => {
      expectErrorBody(await http.get('/v1/nothing'), 404, 'route_not_found');
      expectErrorBody(await http.get('/nothing'), 404, 'route_not_found');
    });

    it('answers 405 method_not_allowed with Allow for a known path', async () => {
      const res = await http.delete('/v1/pets');
      expectErrorBody(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      const put = await http.put('/v1/pets/1');
      expectErrorBody(put, 405, 'method_not_allowed');
      expect(put.headers.allow).toBe('GET, HEAD');
    });
  });
});
