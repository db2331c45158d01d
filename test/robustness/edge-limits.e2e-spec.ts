import type { NestExpressApplication } from '@nestjs/platform-express';
import fc from 'fast-check';
import { METHODS } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { AdminServer } from '../../src/admin/admin.server.js';
import { AdminTokensService } from '../../src/admin-tokens/admin-tokens.service.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { MAX_HEADER_FIELDS } from '../../src/http/request-limits.js';
import { MAX_NAMES_ECHOED } from '../../src/http/unknown-names.js';
import { startTestApp } from '../support/app.js';
import { issueApiKey, TEST_ACTOR } from '../support/api-keys.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { idempotencyKeyLine } from '../support/idempotency.js';
import { codePointString } from '../support/arbitraries.js';
import { expectErrorBody } from '../support/error-body.js';
import { buildRequest, rawExchange, RawRequest } from '../support/raw-http.js';

/**
 * Where a default of Node, Express or a parser would decide instead of the contract, on both
 * databases: number literals near integers, keys given twice, blank-rendering names, query
 * strings and heads past a library's count, paths that are not percent-encoding, content and
 * transfer codings, method tokens, Node's own refusals, and Expect: 100-continue. Each refusal
 * is the Error body, and nothing is stored. The rules of a request's head, and Node's own
 * refusals, are the HTTP edge's: they are checked on both listeners (the public API and the
 * admin API), with the same answers.
 */
describeEachDatabase('the edge decides by the contract, on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let port: number;
  let key: string;
  let adminToken: string;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { env: { ADMIN_PORT: '0' } });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
    key = await issueApiKey(app);
    adminToken = (await app.get(AdminTokensService).create('edge', TEST_ACTOR)).token;
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const petCount = () => app.get(PrismaService).pet.count();
  const raw = (req: RawRequest) => rawExchange(port, buildRequest(req));
  const post = (body: string | Buffer, headers: Record<string, string> = {}) => {
    const req = request(app.getHttpServer())
      .post('/v1/pets')
      .set('Authorization', `Bearer ${key}`)
      .set('Content-Type', 'application/json');
    for (const [name, value] of Object.entries(headers)) req.set(name, value);
    return req.send(body);
  };

  /** `send` answers with the Error body of `status`/`code`, and stores no animal. */
  async function expectNothingStored<T>(send: () => Promise<T>): Promise<T> {
    const before = await petCount();
    const res = await send();
    expect(await petCount()).toBe(before);
    return res;
  }

  describe('numbers are judged from their text', () => {
    it.each(['0.99999999999999999', '7.000000000000000001', '4503599627370496.4', '1.5', '1e-400'])(
      'refuses categoryId %s with 400 validation_failed naming it, and stores nothing',
      async (literal) => {
        const res = await expectNothingStored(() => post(`{"name":"x","categoryId":${literal}}`));
        const error = expectErrorBody(res, 400, 'validation_failed', /categoryId/);
        expect(error.details).toEqual([{ field: 'categoryId', message: expect.stringMatching(/integer/) }]);
      },
    );

    it.each([
      ['7.0', 7],
      ['7.000', 7],
      ['70e-1', 7],
      ['1e2', 100],
    ])('stores categoryId %s as the integer it is exactly (%s)', async (literal, value) => {
      const res = await post(`{"name":"x","categoryId":${literal}}`);
      expect(res.status).toBe(201);
      expect(res.body.categoryId).toBe(value);
    });

    it('stores 9223372036854775807.0 as 2^63-1, exactly', async () => {
      const res = await post('{"name":"x","categoryId":9223372036854775807.0}');
      expect(res.status).toBe(201);
      expect(res.text).toContain('"categoryId":9223372036854775807');
    });

    it('does not replay an Idempotency-Key for a body whose number only rounds to the first one', async () => {
      const idempotencyKey = `exact-${kind}`;
      expect((await post('{"name":"x","categoryId":1}', { 'Idempotency-Key': idempotencyKey })).status).toBe(201);
      const res = await expectNothingStored(() =>
        post('{"name":"x","categoryId":1.00000000000000001}', { 'Idempotency-Key': idempotencyKey }),
      );
      expectErrorBody(res, 422, 'idempotency_key_reused');
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    });
  });

  describe('a key given twice is invalid JSON', () => {
    it.each(['{"name":"x","name":"x","categoryId":1}', '{"name":"x","categoryId":7,"categoryId":7.0}'])(
      'refuses %s with 400 malformed_json, and stores nothing',
      async (body) => {
        expectErrorBody(await expectNothingStored(() => post(body)), 400, 'malformed_json', /repeats a key|Duplicate/);
      },
    );
  });

  describe('a name needs a character that renders', () => {
    it('refuses names of characters that render as nothing, and stores nothing', async () => {
      const blank = codePointString(
        fc.constantFrom(0x2800, 0x1d159, 0x3164, 0x115f, 0x1160, 0xffa0, 0x180e, 0x2000, 0x200b),
        1,
        6,
      );
      await fc.assert(
        fc.asyncProperty(blank, async (name) => {
          const res = await expectNothingStored(() => post(JSON.stringify({ name, categoryId: 1 })));
          expectErrorBody(res, 400, 'validation_failed', /visible/);
        }),
        { numRuns: 10 },
      );
    });
  });

  describe('every pair of the query string is read', () => {
    const pad = '&'.repeat(1000);

    it('answers listPets with a bad parameter after 1,000 empty pairs with 400 invalid_parameter', async () => {
      const res = await request(app.getHttpServer())
        .get(`/v1/pets?limit=1${pad}&status=bogus`)
        .set('Authorization', `Bearer ${key}`);
      const error = expectErrorBody(res, 400, 'invalid_parameter', /status/);
      expect(error.details).toEqual([expect.objectContaining({ field: 'status' })]);
      expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    });

    it('answers a parameter repeated after 1,000 others, and getPet with one, with a 400', async () => {
      const pairs = Array.from({ length: 1001 }, (_, i) => `p${i}=1`).join('&');
      const list = await request(app.getHttpServer())
        .get(`/v1/pets?limit=1${pad}&limit=2`)
        .set('Authorization', `Bearer ${key}`);
      expectErrorBody(list, 400, 'invalid_parameter', /limit/);
      const get = await request(app.getHttpServer())
        .get(`/v1/pets/1?${pad}&foo=1`)
        .set('Authorization', `Bearer ${key}`);
      expectErrorBody(get, 400, 'unknown_parameter', /foo/);
      const many = await request(app.getHttpServer()).get(`/v1/pets/1?${pairs}`).set('Authorization', `Bearer ${key}`);
      const error = expectErrorBody(many, 400, 'unknown_parameter', /and 991 more/);
      // The echo is bounded, whatever the number of names.
      expect(error.details).toHaveLength(MAX_NAMES_ECHOED);
      expect(many.text.length).toBeLessThan(2048);
    });
  });

  describe('a path that is not percent-encoding is admitted before it is refused', () => {
    it.each(['/v1/pets/%', '/v1/pets/%zz', '/v1/pets/%c0%ae'])(
      'answers GET %s with 400 invalid_parameter, the rate-limit and deprecation headers',
      async (target) => {
        const res = await raw({ target, headers: [`Authorization: Bearer ${key}`] });
        expectErrorBody(res, 400, 'invalid_parameter', /petId/);
        expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
        expect(res.headers.deprecation).toMatch(/^@\d+$/);
        expect(res.headers['x-request-id']).toMatch(/\S/);
      },
    );

    it('answers a path no route has with 404 route_not_found and the rate-limit headers', async () => {
      const res = await raw({ target: '/v1/%zz', headers: [`Authorization: Bearer ${key}`] });
      expectErrorBody(res, 404, 'route_not_found');
      expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    });

    it('answers a client over its limit with 429, and one without a key with 401', async () => {
      const limited = await issueApiKey(app, { plan: 'enterprise', perMinute: 1, perDay: 100 });
      expect((await raw({ target: '/v1/pets/%', headers: [`Authorization: Bearer ${limited}`] })).status).toBe(400);
      const res = await raw({ target: '/v1/pets/%', headers: [`Authorization: Bearer ${limited}`] });
      expectErrorBody(res, 429, 'rate_limit_exceeded');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expectErrorBody(await raw({ target: '/v1/pets/%c0%ae' }), 401, 'missing_api_key');
    });
  });

  describe('codings the service does not apply are refused', () => {
    it('refuses a body with any Content-Encoding but identity with 415, and stores nothing', async () => {
      const coding = fc.oneof(
        fc.constantFrom('gzip', 'x-gzip', 'deflate', 'br', 'compress', 'zstd', 'identity, gzip', 'GZIP'),
        fc.stringMatching(/^[a-z][a-z0-9-]{0,9}$/).filter((c) => c !== 'identity'),
      );
      await fc.assert(
        fc.asyncProperty(coding, fc.boolean(), async (contentEncoding, compressed) => {
          const text = '{"name":"Coded","categoryId":1}';
          const res = await expectNothingStored(() =>
            post(compressed ? gzipSync(text) : text, { 'Content-Encoding': contentEncoding }),
          );
          expectErrorBody(res, 415, 'unsupported_media_type', /Content-Encoding/);
          expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
        }),
        { numRuns: 12 },
      );
      expect((await post('{"name":"Plain","categoryId":1}', { 'Content-Encoding': 'identity' })).status).toBe(201);
    });
  });

  /**
   * The two listeners, each with a request that stores one row when it is admitted: an animal
   * on the public API, an API key on the admin API.
   */
  interface Door {
    port: () => number;
    target: string;
    authorization: () => string;
    body: string;
    stored: () => Promise<number>;
  }
  const DOORS: [string, Door][] = [
    [
      'the public listener',
      {
        port: () => port,
        target: '/v1/pets',
        authorization: () => `Bearer ${key}`,
        body: '{"name":"Edge","categoryId":1}',
        stored: petCount,
      },
    ],
    [
      'the admin listener',
      {
        port: () => app.get(AdminServer).port() as number,
        target: '/admin/v1/keys',
        authorization: () => `Bearer ${adminToken}`,
        body: '{"name":"Edge","plan":"free"}',
        stored: () => app.get(PrismaService).apiKey.count(),
      },
    ],
  ];

  describe.each(DOORS)('the head of a request, on %s', (_door, door) => {
    const send = (req: RawRequest) => rawExchange(door.port(), buildRequest(req));
    /** The door's create with `headers` after its Authorization and Content-Type, checked to store nothing. */
    async function refusedCreate(headers: string[]) {
      const before = await door.stored();
      const res = await send({
        method: 'POST',
        target: door.target,
        headers: [`Authorization: ${door.authorization()}`, 'Content-Type: application/json', ...headers],
        body: door.body,
      });
      expect(await door.stored()).toBe(before);
      return res;
    }

    it('accepts the create itself (201)', async () => {
      const before = await door.stored();
      const res = await send({
        method: 'POST',
        target: door.target,
        headers: [`Authorization: ${door.authorization()}`, 'Content-Type: application/json'],
        body: door.body,
      });
      expect(res.status).toBe(201);
      expect(await door.stored()).toBe(before + 1);
    });

    it('refuses a transfer coding other than chunked with 501 not_implemented, and stores nothing', async () => {
      const before = await door.stored();
      const chunk = Buffer.from(door.body);
      const res = await send({
        method: 'POST',
        target: door.target,
        headers: [
          `Authorization: ${door.authorization()}`,
          'Content-Type: application/json',
          'Transfer-Encoding: gzip, chunked',
        ],
        body: `${chunk.length.toString(16)}\r\n${door.body}\r\n0\r\n\r\n`,
      });
      expectErrorBody(res, 501, 'not_implemented', /Transfer-Encoding/);
      expect(res.headers.connection).toBe('close');
      expect(await door.stored()).toBe(before);
    });

    it('refuses a transfer coding that does not end in chunked with 400, and stores nothing', async () => {
      const res = await refusedCreate(['Transfer-Encoding: chunked, gzip']);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    });

    it.each([
      ['Content-Type', ['Content-Type: text/plain']],
      ['Host', ['Host: a.test', 'Host: b.test']],
      // Node keeps the first and drops this one: the first would silently win.
      ['Authorization', ['authorization: Bearer as_forged']],
    ])('refuses a second %s header with 400 validation_failed, and stores nothing', async (name, extra) => {
      const error = expectErrorBody(await refusedCreate(extra), 400, 'validation_failed', new RegExp(name, 'i'));
      expect(error.details).toEqual([{ field: name.toLowerCase(), message: 'given more than once' }]);
    });

    /** The create with `count` header fields in all (Host, Connection and Content-Length included). */
    const withFields = (count: number) => {
      const headers = [`Authorization: ${door.authorization()}`, 'Content-Type: application/json'];
      for (let i = headers.length + 3; i < count; i++) headers.push(`x${i}: 1`);
      return send({ method: 'POST', target: door.target, headers, body: door.body });
    };

    it(`refuses more than ${MAX_HEADER_FIELDS} header fields with 431, and accepts up to that many`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.integer({ min: MAX_HEADER_FIELDS - 2, max: MAX_HEADER_FIELDS + 2 }), fc.constantFrom(150, 2000)),
          async (count) => {
            const before = await door.stored();
            const res = await withFields(count);
            if (count > MAX_HEADER_FIELDS) {
              expectErrorBody(res, 431, 'headers_too_large', /header fields/);
              expect(await door.stored()).toBe(before);
            } else {
              expect(res.status).toBe(201);
              expect(await door.stored()).toBe(before + 1);
            }
          },
        ),
        { numRuns: 8 },
      );
    });

    it('answers an HTTP/1.1 request without Host with 400 validation_failed', async () => {
      const res = await rawExchange(
        door.port(),
        Buffer.from(
          `GET ${door.target} HTTP/1.1\r\nAuthorization: ${door.authorization()}\r\nConnection: close\r\n\r\n`,
        ),
      );
      expectErrorBody(res, 400, 'validation_failed', /Host/);
    });

    it('answers CONNECT with 501 not_implemented', async () => {
      const res = await rawExchange(
        door.port(),
        Buffer.from('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
      );
      expectErrorBody(res, 501, 'not_implemented', /CONNECT/);
    });

    it('answers a malformed request line with 400 validation_failed', async () => {
      expectErrorBody(
        await rawExchange(door.port(), Buffer.from('GET / HTTP/9.9 extra\r\n\r\n')),
        400,
        'validation_failed',
      );
    });

    it('refuses a body with a Content-Encoding with 415, and stores nothing', async () => {
      const res = await refusedCreate(['Content-Encoding: gzip']);
      expectErrorBody(res, 415, 'unsupported_media_type', /Content-Encoding/);
    });
  });

  describe('header fields are counted with the request they came with', () => {
    const create = (count: number, idempotencyKey: string) => {
      const headers = [`Authorization: Bearer ${key}`, 'Content-Type: application/json'];
      // With Host and Connection (added by buildRequest) and Content-Length and Idempotency-Key:
      // `count` fields in all.
      for (let i = headers.length + 4; i < count; i++) headers.push(`x${i}: 1`);
      headers.push(idempotencyKeyLine(idempotencyKey));
      return raw({ method: 'POST', target: '/v1/pets', headers, body: '{"name":"Headers","categoryId":1}' });
    };

    it(`replays a create of ${MAX_HEADER_FIELDS} fields with its Idempotency-Key, and stores it once`, async () => {
      const before = await petCount();
      expect((await create(MAX_HEADER_FIELDS, `fields-${kind}`)).status).toBe(201);
      const again = await create(MAX_HEADER_FIELDS, `fields-${kind}`);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await petCount()).toBe(before + 1);
    });

    it('answers 1,995 small headers then an Idempotency-Key with 431, twice, storing nothing', async () => {
      for (let i = 0; i < 2; i++) {
        const res = await expectNothingStored(() => create(2000, `many-${kind}`));
        expectErrorBody(res, 431, 'headers_too_large');
        expect(res.headers['x-request-id']).toMatch(/\S/);
      }
    });
  });

  describe('methods the router does not know', () => {
    const methods = METHODS.filter((m) => !['GET', 'HEAD', 'POST', 'CONNECT'].includes(m));

    it('answers every other method on /v1/pets and /v1/pets/{petId} with 405 and Allow', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...methods),
          fc.constantFrom('/v1/pets', '/v1/pets/1'),
          async (method, path) => {
            const res = await raw({ method, target: path, headers: [`Authorization: Bearer ${key}`] });
            expectErrorBody(res, 405, 'method_not_allowed');
            expect(res.headers.allow).toBe(path === '/v1/pets' ? 'GET, HEAD, POST' : 'GET, HEAD');
            expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
          },
        ),
        { numRuns: 20 },
      );
      const search = await raw({ method: 'M-SEARCH', target: '/v1/pets', headers: [`Authorization: Bearer ${key}`] });
      expectErrorBody(search, 405, 'method_not_allowed');
      expect(search.body.toString()).not.toMatch(/Cannot/);
    });
  });

  describe('Expect: 100-continue', () => {
    const expecting = (headers: string[]) =>
      raw({
        method: 'POST',
        target: '/v1/pets',
        headers: [...headers, 'Content-Type: application/json', 'Expect: 100-continue'],
        body: '{"name":"Continue","categoryId":1}',
      });

    it('is not answered 100 before admission: a client without a key gets its 401 only', async () => {
      const res = await expectNothingStored(() => expecting([]));
      expect(res.raw.toString('latin1')).not.toMatch(/^HTTP\/1\.1 100/);
      expectErrorBody(res, 401, 'missing_api_key');
    });

    it('is answered 100 once the request is admitted, then the body is read', async () => {
      const res = await expecting([`Authorization: Bearer ${key}`]);
      expect(res.raw.toString('latin1')).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
      expect(res.status).toBe(201);
    });
  });
});
