import type { NestExpressApplication } from '@nestjs/platform-express';
import fc from 'fast-check';
import type { AddressInfo } from 'node:net';
import { generateApiKey } from '../../src/api-keys/api-key-format.js';
import { ERROR_CODES } from '../../src/errors/api-error.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { issueApiKey } from '../support/api-keys.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { buildRequest, rawExchange, RawRequest, RawResponse } from '../support/raw-http.js';
import { redisEnv } from '../support/redis-env.js';
import { errorBodyProblem } from '../support/error-body.js';
import {
  anyContentType,
  anyMethod,
  anyPath,
  bodyBytes,
  headerText,
  petIdSegment,
  queryTarget,
  validPetText,
} from '../support/request-arbitraries.js';
import { idempotencyKeyLine } from '../support/idempotency.js';

/**
 * Hostile input against the running application (the production module, a real database, a
 * real socket): random and malformed bodies, query strings, path parameters, headers and whole
 * requests. Whatever arrives, the answer is never a 5xx: an error is always the Error body
 * `{code, message, status}` with `status` equal to the HTTP status, the process stays up, and
 * nothing is stored but the animals whose creation was answered 201.
 *
 * FUZZ_RUNS sets the total number of cases (default 10,400); FUZZ_SEED replays a run; FUZZ_STATS=1 prints the answers per status. The suite
 * runs on the embedded database, and with DATABASE_URL a tenth of the cases again on
 * PostgreSQL; with REDIS_URL the rate limiter counts in Redis.
 */
const TOTAL = Number(process.env.FUZZ_RUNS ?? 10_400);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** Share of the cases per kind of input. */
const SHARE = {
  bodies: 0.38,
  contentTypes: 0.07,
  queries: 0.17,
  paths: 0.13,
  headers: 0.17,
  requests: 0.07,
  oversized: 0.01,
};

const ERROR_CODE_SET = new Set<string>(ERROR_CODES);
const CT_JSON = 'Content-Type: application/json';

// ---------------------------------------------------------------- the suite

describeEachDatabase('fuzz: hostile input on %s', (kind) => {
  // The full count on the embedded database; a tenth of that again on PostgreSQL.
  const scale = kind === 'embedded' ? 1 : 0.1;
  let db: TestDatabase;
  let app: NestExpressApplication;
  let port: number;
  let key: string;
  let cases = 0;
  const runs = (share: number) => Math.max(1, Math.round(TOTAL * share * scale));
  const params = (share: number) => ({ numRuns: runs(share), seed: SEED, endOnFailure: true });

  // Each case starts a new rate-limit minute: requests without a valid key would otherwise be
  // limited, then banned, per address after a few dozen cases, and stop reaching the code
  // under test (per-address limits have tests of their own).
  const clock = new FakeClock();

  // With REDIS_URL (CI), the counters live in Redis, as in production.
  const redis = redisEnv('fuzz');

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { clock, env: redis.env });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
    key = await issueApiKey(app);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    await redis.cleanup();
  });

  const auth = `Authorization: Bearer `;
  const send = (req: RawRequest, timeoutMs?: number) => {
    cases++;
    clock.set(new Date(clock.now().getTime() + 61_000));
    return rawExchange(port, buildRequest(req), timeoutMs);
  };

  /** Why a response breaks the rules, or undefined. `ok` lists the success statuses allowed. */
  function problem(res: RawResponse, ok: number[], head = false): string | undefined {
    if (res.status >= 500) return `status ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`;
    if (ok.includes(res.status)) return undefined;
    if (res.status < 400) return `unexpected success status ${res.status}`;
    if (head) return undefined; // HEAD answers carry no body
    if (!/^application\/json/.test(res.headers['content-type'] ?? ''))
      return `error without JSON: ${res.headers['content-type']}`;
    const checked = errorBodyProblem(res.status, res.body.toString('utf8'), res.headers['x-request-id']);
    if ('problem' in checked) return checked.problem;
    const code = checked.body.code;
    if (typeof code !== 'string' || !ERROR_CODE_SET.has(code)) return `unknown code ${String(code)}`;
    return undefined;
  }

  /** Answers per status, per test: FUZZ_STATS=1 prints them (what the generators reach). */
  const stats = new Map<string, Map<string, number>>();
  afterEach(() => {
    const name = expect.getState().currentTestName ?? '';
    if (process.env.FUZZ_STATS && stats.size > 0)
      console.log(name, Object.fromEntries([...stats.values()].flatMap((m) => [...m])));
    stats.clear();
  });

  function expectOk(res: RawResponse, ok: number[], what: unknown, head = false): void {
    const code =
      res.status >= 400
        ? `${res.status} ${/"code":"(\w+)"/.exec(res.body.toString('utf8'))?.[1] ?? ''}`
        : String(res.status);
    const tally = stats.get('') ?? new Map<string, number>();
    tally.set(code, (tally.get(code) ?? 0) + 1);
    stats.set('', tally);
    const p = problem(res, ok, head);
    if (p !== undefined)
      throw new Error(`${p}\nfor ${typeof what === 'string' ? what : JSON.stringify(what).slice(0, 500)}`);
  }

  /** Everything stored: animals, Idempotency-Keys, API keys (not their last use). */
  async function stored(): Promise<string> {
    const prisma = app.get(PrismaService);
    const [pets, keys, apiKeys] = await Promise.all([
      prisma.$queryRawUnsafe(
        `SELECT id::text, name, category_id::text AS c, status::text AS s, created_at, updated_at FROM pets ORDER BY id`,
      ),
      prisma.$queryRawUnsafe(
        `SELECT api_key_id::text AS a, key, fingerprint, state::text AS s, response_body AS b FROM idempotency_keys ORDER BY 1, 2`,
      ),
      prisma.$queryRawUnsafe(`SELECT id::text, name, plan::text AS p, hash, revoked_at FROM api_keys ORDER BY id`),
    ]);
    return JSON.stringify({ pets, keys, apiKeys });
  }

  async function expectUnchanged(run: () => Promise<void>): Promise<void> {
    const before = await stored();
    await run();
    expect(await stored()).toBe(before);
  }

  async function expectAlive(): Promise<void> {
    const live = await send({ target: '/healthz' });
    expect(live.status).toBe(200);
    const ready = await send({ target: '/readyz' });
    expect(ready.status).toBe(200);
  }

  it('bodies of POST /v1/pets: 201 or a 4xx Error body; only the 201s are stored', async () => {
    const prisma = app.get(PrismaService);
    const before = await prisma.pet.count();
    const createdHere: string[] = [];
    await fc.assert(
      fc.asyncProperty(bodyBytes, fc.option(headerText(300), { freq: 4 }), async (body, idempotencyKey) => {
        const headers = [`${auth}${key}`, CT_JSON];
        if (idempotencyKey !== null) headers.push(idempotencyKeyLine(idempotencyKey));
        const res = await send({
          method: 'POST',
          target: '/v1/pets',
          headers: headers.map((h) => Buffer.from(h, 'latin1')),
          body,
        });
        expectOk(res, [201], body.toString('utf8').slice(0, 300));
        if (res.status === 201 && res.headers['idempotent-replayed'] === undefined)
          createdHere.push(res.body.toString('utf8'));
      }),
      params(SHARE.bodies),
    );
    // Exactly the animals answered 201 were stored, each as answered.
    expect(await prisma.pet.count()).toBe(before + createdHere.length);
    for (const text of createdHere.slice(-200)) {
      const id = /^\{"id":(\d+),/.exec(text)![1];
      const res = await send({ target: `/v1/pets/${id}`, headers: [`${auth}${key}`] });
      expect(res.body.toString('utf8')).toBe(text);
    }
    await expectAlive();
  }, 600_000);

  it('content types: 415 or 400 (201 only for JSON in UTF-8), nothing else stored', async () => {
    await fc.assert(
      fc.asyncProperty(anyContentType, validPetText, async (type, body) => {
        const res = await send({
          method: 'POST',
          target: '/v1/pets',
          headers: [`${auth}${key}`, `Content-Type: ${type}`],
          body,
        });
        expectOk(res, [201], type);
        if (res.status === 201) expect(type.toLowerCase()).toMatch(/^application\/json\s*(;|$)/);
      }),
      params(SHARE.contentTypes),
    );
    await expectAlive();
  }, 600_000);

  it('query strings of GET /v1/pets: 200 or 400, nothing stored', async () => {
    await expectUnchanged(async () => {
      await fc.assert(
        fc.asyncProperty(queryTarget, async (target) => {
          const res = await send({ target, headers: [`${auth}${key}`] });
          expectOk(res, [200], target);
        }),
        params(SHARE.queries),
      );
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await expectAlive();
  }, 600_000);

  it('path parameters, methods and unknown routes: never a 5xx, nothing stored', async () => {
    await expectUnchanged(async () => {
      await fc.assert(
        fc.asyncProperty(petIdSegment, async (segment) => {
          const target = `/v1/pets/${segment}`;
          expectOk(await send({ target, headers: [`${auth}${key}`] }), [200], target);
        }),
        params(SHARE.paths / 2),
      );
      await fc.assert(
        fc.asyncProperty(anyMethod, anyPath, fc.boolean(), async (m, target, withKey) => {
          const headers = withKey ? [`${auth}${key}`] : [];
          // POST bodies are refused here (no Content-Type): this property must not create.
          const res = await send({
            method: m,
            target,
            headers,
            body: m === 'GET' || m === 'HEAD' ? undefined : '{"name":"x","categoryId":1}',
          });
          expectOk(res, [200, 204], `${m} ${target}`, m === 'HEAD');
        }),
        params(SHARE.paths / 2),
      );
    });
    await expectAlive();
  }, 600_000);

  it('headers: Authorization, Idempotency-Key, X-Forwarded-For, X-Request-Id, Accept, framing', async () => {
    const authorization = fc.oneof(
      fc.constant(`Bearer ${key}`),
      fc.constantFrom(
        `bearer ${key}`,
        `Bearer  ${key}`,
        `Bearer ${key} x`,
        `Basic ${key}`,
        'Bearer',
        'Bearer ',
        `Bearer ${key.slice(0, -1)}`,
        `Bearer ${key}x`,
      ),
      fc.constant(null).map(() => `Bearer ${generateApiKey()}`),
      headerText(200).map((t) => `Bearer ${t}`),
      headerText(300),
    );
    const header = fc.oneof(
      headerText(200).map(idempotencyKeyLine),
      headerText(200).map((v) => `X-Forwarded-For: ${v}`),
      headerText(200).map((v) => `X-Request-Id: ${v}`),
      headerText(100).map((v) => `Accept: ${v}`),
      headerText(100).map((v) => `Accept-Encoding: ${v}`),
      headerText(50).map((v) => `${v.replace(/[^A-Za-z0-9-]/g, '') || 'X'}: ${v}`),
      // Control characters and raw bytes, which HTTP clients refuse to send.
      fc
        .uint8Array({ minLength: 1, maxLength: 40 })
        .map((b) => Buffer.concat([Buffer.from('X-Raw: '), Buffer.from(b.filter((c) => c !== 10 && c !== 13))])),
      fc.constantFrom(
        'Content-Length: abc',
        'Content-Length: -1',
        'Content-Length: 1, 2',
        'Transfer-Encoding: gzip',
        'Transfer-Encoding: chunked, chunked',
        'Expect: 100-continue',
        'Expect: teapot',
        'Connection: upgrade',
        'Upgrade: h2c',
        ': empty-name',
        'No-Colon',
        ' Leading-Space: x',
      ),
    );
    await expectUnchanged(async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.option(authorization, { freq: 6 }),
          fc.array(header, { maxLength: 4 }),
          fc.constantFrom('/v1/pets', '/v1/pets/1', '/v1/pets?limit=2'),
          async (a, extra, target) => {
            const headers: (string | Buffer)[] = a === null ? [] : [Buffer.from(`Authorization: ${a}`, 'latin1')];
            headers.push(...extra.map((h) => (typeof h === 'string' ? Buffer.from(h, 'latin1') : h)));
            const res = await send({ target, headers }, 15_000);
            expectOk(
              res,
              [200],
              headers.map((h) => h.toString('latin1')),
            );
          },
        ),
        params(SHARE.headers),
      );
    });
    await expectAlive();
  }, 600_000);

  it('whole requests of random bytes, broken request lines and framing: an Error body or a closed connection', async () => {
    const garbage = fc.oneof(
      fc
        .uint8Array({ minLength: 1, maxLength: 3000 })
        .map((a) => Buffer.concat([Buffer.from(a), Buffer.from('\r\n\r\n')])),
      fc
        .tuple(fc.string({ maxLength: 30 }), fc.string({ maxLength: 60 }))
        .map(([m, t]) => Buffer.from(`${m} ${t} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)),
      fc.uint8Array({ minLength: 1, maxLength: 200 }).map((t) =>
        buildRequest({
          target: Buffer.concat([Buffer.from('/v1/pets/'), Buffer.from(t.filter((c) => c > 32 && c !== 127))]),
          headers: [`${auth}${key}`],
        }),
      ),
      fc
        .constantFrom(
          'GET /v1/pets HTTP/1.0\r\n\r\n',
          'GET /v1/pets HTTP/2.0\r\nHost: x\r\n\r\n',
          'GET /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello',
          'POST /v1/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
          'POST /v1/pets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\nConnection: close\r\n\r\n0\r\n\r\n',
          'GET /v1/pets\r\n\r\n',
          '\r\n\r\n',
          'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
          'GET http://evil.example/v1/pets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
          'GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
          'GET /v1/pets HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n',
        )
        .map((s) => Buffer.from(s)),
    );
    await expectUnchanged(async () => {
      await fc.assert(
        fc.asyncProperty(garbage, async (bytes) => {
          cases++;
          clock.set(new Date(clock.now().getTime() + 61_000));
          let res: RawResponse | undefined;
          try {
            res = await rawExchange(port, bytes, 15_000, true);
          } catch (err) {
            // A connection closed without an answer is a fine answer to garbage; a hang is not.
            if (/no complete answer/.test((err as Error).message)) throw err;
            return;
          }
          expectOk(res, [200, 400, 404], bytes.toString('latin1').slice(0, 200));
        }),
        params(SHARE.requests),
      );
    });
    await expectAlive();
  }, 600_000);

  it('oversized headers: 431 with the Error body (or, for many small ones, an ordinary answer); the server stays up', async () => {
    await expectUnchanged(async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 17 * 1024, max: 256 * 1024 }), fc.boolean(), async (size, many) => {
          const headers = many
            ? Array.from({ length: Math.ceil(size / 40) }, (_, i) => `X-Filler-${i}: ${'f'.repeat(24)}`)
            : [`${auth}${key}`, `X-Big: ${'b'.repeat(size)}`];
          const res = await send({ target: '/v1/pets', headers });
          // One header over 16 KiB is refused by Node's parser: 431. Many small ones may pass
          // it (Node keeps the first 2000), and are then answered like any other request.
          expectOk(res, many ? [200] : [], `${many ? 'many headers' : 'one header'} of ${size} bytes`);
          if (!many) expect(res.status).toBe(431);
        }),
        params(SHARE.oversized),
      );
    });
    await expectAlive();
  }, 600_000);

  it(`ran ${Math.round(TOTAL * scale)} cases or more, and no response anywhere was a 5xx`, async () => {
    expect(cases).toBeGreaterThanOrEqual(Math.floor(TOTAL * scale * 0.99));
    // Also what never reached the wire (a response cut by a closing connection) is counted.
    const metrics = (await send({ target: '/metrics' })).body.toString('utf8');
    const fiveHundreds = metrics
      .split('\n')
      .filter((l) => l.startsWith('http_request_duration_seconds_count') && /status_code="5\d\d"/.test(l));
    expect(fiveHundreds).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await expectAlive();
  });
});
