import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import {
  IdempotencyService,
  IDEMPOTENCY_TTL_MS,
  IN_FLIGHT_TIMEOUT_MS,
} from '../../src/idempotency/idempotency.service.js';
import { hashApiKey } from '../../src/api-keys/api-key-format.js';
import { requestFingerprint } from '../../src/idempotency/idempotency-key.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { issueApiKey } from '../support/api-keys.js';
import { expectErrorBody } from '../support/error-body.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { postPet } from '../support/idempotency.js';

const BASE = 'https://api.example.test/v1';

function expectError(res: request.Response, status: number, code: string): void {
  expectErrorBody(res, status, code);
  // Thrown after the guards: the rate-limit headers are there, as on every /v1 answer.
  expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
  expect(res.headers['idempotent-replayed']).toBeUndefined();
}

describeEachDatabase('Idempotency-Key on POST /v1/pets (%s)', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let key: string;
  let otherKey: string;
  const clock = new FakeClock();
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { clock });
    key = await issueApiKey(app);
    otherKey = await issueApiKey(app);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const uniqueKey = () => `test-${kind}-${++seq}-${Math.random().toString(36).slice(2)}`;
  const post = (body: string, idempotencyKey?: string, apiKey = key) => postPet(app, apiKey, body, idempotencyKey);
  const petsNamed = async (name: string) =>
    (
      await app
        .get(PrismaService)
        .pet.findMany({ where: { name }, select: { id: true, name: true, categoryId: true, status: true } })
    ).map((p) => ({
      ...p,
      id: p.id.toString(),
      categoryId: p.categoryId.toString(),
    }));
  const row = (apiKeyId: bigint, k: string) =>
    app.get(PrismaService).idempotencyKey.findUnique({ where: { apiKeyId_key: { apiKeyId, key: k } } });
  const keyIdOf = async (apiKey: string) =>
    (await app.get(PrismaService).apiKey.findUniqueOrThrow({ where: { hash: hashApiKey(apiKey) } })).id;

  it('replays the first response exactly (status, body, Location) and creates nothing more', async () => {
    const k = uniqueKey();
    const first = await post('{"name":"Replay","categoryId":9223372036854775807,"status":"pending"}', k);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.headers.location).toBe(`${BASE}/pets/${first.body.id}`);
    expect(first.text).toMatch(/"categoryId":9223372036854775807,/);

    // The same JSON, written differently (key order, white space), is the same request.
    const again = await post(' { "status" : "pending", "categoryId": 9223372036854775807, "name": "Replay" } ', k);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(again.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(await petsNamed('Replay')).toHaveLength(1);
  });

  it('answers 422 idempotency_key_reused for the same key with a different body, and stores nothing', async () => {
    const k = uniqueKey();
    expect((await post('{"name":"Reused","categoryId":1}', k)).status).toBe(201);
    expectError(await post('{"name":"Reused","categoryId":2}', k), 422, 'idempotency_key_reused');
    expectError(await post('{"name":"Reused","categoryId":1,"status":"available"}', k), 422, 'idempotency_key_reused');
    expect(await petsNamed('Reused')).toHaveLength(1);
  });

  it('a key used with another body is a 422 even when the new body is refused (400) too', async () => {
    const k = uniqueKey();
    expect((await post('{"name":"ReusedInvalid","categoryId":1}', k)).status).toBe(201);
    expectError(await post('{"name":"","categoryId":1}', k), 422, 'idempotency_key_reused');
    // A refused body with a new key, or with a key whose record has expired, stays a 400.
    expectError(await post('{"name":"","categoryId":1}', uniqueKey()), 400, 'validation_failed');
    expect(await petsNamed('ReusedInvalid')).toHaveLength(1);
  });

  it('stores a new key with its pet in one statement: no claim is taken, and the record holds the response', async () => {
    const service = app.get(IdempotencyService);
    const claim = jest.spyOn(service, 'claim');
    try {
      const k = uniqueKey();
      const first = await post('{"name":"OneStatement","categoryId":9007199254740993}', k);
      expect(first.status).toBe(201);
      expect(claim).not.toHaveBeenCalled();
      const stored = await row(await keyIdOf(key), k);
      expect(stored).toMatchObject({
        state: 'completed',
        responseStatus: 201,
        responseBody: first.text,
        responseLocation: first.headers.location,
      });
      expect(stored?.expiresAt.getTime()).toBe(clock.now().getTime() + IDEMPOTENCY_TTL_MS);
      // A retry finds the record: the claim decides it (a replay).
      const again = await post('{"name":"OneStatement","categoryId":9007199254740993}', k);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(claim).toHaveBeenCalledTimes(1);
    } finally {
      claim.mockRestore();
    }
  });

  it('scopes keys per API key', async () => {
    const k = uniqueKey();
    const mine = await post('{"name":"Scoped","categoryId":1}', k);
    const theirs = await post('{"name":"Scoped","categoryId":1}', k, otherKey);
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
    // A different body from the other API key is not a reuse of mine either.
    expect((await post('{"name":"Scoped","categoryId":2}', uniqueKey(), otherKey)).status).toBe(201);
    expect(await petsNamed('Scoped')).toHaveLength(3);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['with a space', 'two words'],
    ['with a tab', 'a\tb'],
    ['not ASCII', 'clé'],
  ])('answers 400 invalid_parameter for a key that is %s, and creates nothing', async (_what, value) => {
    const res = await post('{"name":"BadKey","categoryId":1}', value);
    expectError(res, 400, 'invalid_parameter');
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'Idempotency-Key' })]);
    expect(await petsNamed('BadKey')).toHaveLength(0);
  });

  it('takes the quoted Structured Field form and the bare key as the same key', async () => {
    const k = uniqueKey();
    const first = await post('{"name":"Quoted","categoryId":3}', `"${k}"`);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const bare = await post('{"name":"Quoted","categoryId":3}', k);
    expect(bare.status).toBe(201);
    expect(bare.headers['idempotent-replayed']).toBe('true');
    expect(bare.text).toBe(first.text);
    // And the other way round, with escapes: the key a"b\c.
    const escaped = `${uniqueKey()}a"b\\c`;
    expect((await post('{"name":"Quoted","categoryId":4}', escaped)).status).toBe(201);
    const requoted = await post('{"name":"Quoted","categoryId":4}', `"${escaped.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
    expect(requoted.headers['idempotent-replayed']).toBe('true');
    expect(await petsNamed('Quoted')).toHaveLength(2);
    expect(await row(await keyIdOf(key), k)).not.toBeNull();
  });

  it.each([
    ['unterminated', '"abc'],
    ['with an escape other than \\" and \\\\', '"a\\bc"'],
    ['followed by more text', '"abc"def'],
    ['empty', '""'],
    ['holding a space', '"two words"'],
  ])('answers a quoted key that is %s with 400 invalid_parameter, and creates nothing', async (_what, value) => {
    const res = await post('{"name":"BadQuoted","categoryId":1}', value);
    expectError(res, 400, 'invalid_parameter');
    expect(res.body.details).toEqual([{ field: 'Idempotency-Key', message: res.body.message }]);
    expect(res.body.message).toMatch(/Idempotency-Key/);
    expect(await petsNamed('BadQuoted')).toHaveLength(0);
  });

  it('accepts a key of 255 visible ASCII characters', async () => {
    const k = `${'~!'.repeat(127)}Z`;
    expect((await post('{"name":"LongKey","categoryId":1}', k)).status).toBe(201);
    expect((await post('{"name":"LongKey","categoryId":1}', k)).headers['idempotent-replayed']).toBe('true');
  });

  it('two keys in one request (a repeated header) are a 400', async () => {
    const res = await request(app.getHttpServer())
      .post('/v1/pets')
      .set('Authorization', `Bearer ${key}`)
      .set('Content-Type', 'application/json')
      .set('Idempotency-Key', ['a', 'b'] as unknown as string) // sent as two header lines
      .send('{"name":"TwoKeys","categoryId":1}');
    expectError(res, 400, 'invalid_parameter');
  });

  it('a refused body does not use up the key: the corrected request runs', async () => {
    const k = uniqueKey();
    expectError(await post('{"name":"","categoryId":1}', k), 400, 'validation_failed');
    expectError(await post('{"name":"Fixed","categoryId":"1"}', k), 400, 'validation_failed');
    const ok = await post('{"name":"Fixed","categoryId":1}', k);
    expect(ok.status).toBe(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers 409 idempotency_key_in_flight while the first request runs; an abandoned claim is taken over after a bound', async () => {
    const k = uniqueKey();
    const body = '{"name":"InFlight","categoryId":4}';
    const apiKeyId = await keyIdOf(key);
    // The claim of a request that is "still running" (or whose process died holding it).
    const service = app.get(IdempotencyService);
    const outcome = await service.claim({
      apiKeyId,
      key: k,
      fingerprint: requestFingerprint('createPet', JSON.parse(body)),
    });
    expect(outcome.kind).toBe('claimed');

    const busy = await post(body, k);
    expectError(busy, 409, 'idempotency_key_in_flight');
    expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // A different body is a reuse whatever the state of the first.
    expectError(await post('{"name":"InFlight","categoryId":5}', k), 422, 'idempotency_key_reused');

    clock.set(new Date(clock.now().getTime() + IN_FLIGHT_TIMEOUT_MS + 1000));
    const taken = await post(body, k);
    expect(taken.status).toBe(201);
    expect(taken.headers['idempotent-replayed']).toBeUndefined();

    // Should the abandoned request come back after all, its completion is refused and its
    // transaction (with its pet) rolls back.
    if (outcome.kind !== 'claimed') throw new Error('unreachable');
    const prisma = app.get(PrismaService);
    await expect(
      prisma.$transaction(async (tx) => {
        await tx.pet.create({ data: { name: 'InFlight', categoryId: 4n, status: 'available' } });
        await outcome.claim.complete(tx, { status: 201, body: { late: true } });
      }),
    ).rejects.toMatchObject({ status: 409, code: 'idempotency_key_in_flight' });
    expect(await petsNamed('InFlight')).toHaveLength(1);
    expect((await post(body, k)).text).toBe(taken.text);
  });

  it('creates exactly one pet for concurrent requests with the same key', async () => {
    const k = uniqueKey();
    const body = '{"name":"Concurrent","categoryId":7}';
    const results = await Promise.all(Array.from({ length: 16 }, () => post(body, k)));
    const created = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(created).toHaveLength(1);
    for (const r of results) {
      if (r.status === 201) expect(r.text).toBe(created[0].text);
      else expectError(r, 409, 'idempotency_key_in_flight');
    }
    expect(await petsNamed('Concurrent')).toHaveLength(1);
    // Once the first has finished, every retry is a replay.
    const later = await post(body, k);
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.text).toBe(created[0].text);
  });

  it('forgets a key after 24 hours, and purges expired keys', async () => {
    const k = uniqueKey();
    const first = await post('{"name":"Expiring","categoryId":1}', k);
    expect(first.status).toBe(201);
    const apiKeyId = await keyIdOf(key);
    expect((await row(apiKeyId, k))?.state).toBe('completed');

    clock.set(new Date(clock.now().getTime() + IDEMPOTENCY_TTL_MS - 60_000));
    expect((await post('{"name":"Expiring","categoryId":1}', k)).headers['idempotent-replayed']).toBe('true');

    clock.set(new Date(clock.now().getTime() + 120_000));
    // Past 24 hours the key starts afresh: a new request, even with another body.
    const fresh = await post('{"name":"Expiring","categoryId":2}', k);
    expect(fresh.status).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(await petsNamed('Expiring')).toHaveLength(2);

    // Every other key of this suite is now older than 24 hours too.
    const service = app.get(IdempotencyService);
    const purged = await service.purgeExpired(new Date(clock.now().getTime() + 1));
    expect(purged).toBeGreaterThan(0);
    expect(await row(apiKeyId, k)).not.toBeNull(); // renewed a moment ago: kept
    const left = await app.get(PrismaService).idempotencyKey.count();
    expect(left).toBe(1);
    expect(await service.purgeExpired(new Date(clock.now().getTime() + IDEMPOTENCY_TTL_MS + 1))).toBe(1);
    expect(await app.get(PrismaService).idempotencyKey.count()).toBe(0);
  });

  it('without the header, every request creates', async () => {
    expect((await post('{"name":"NoKey","categoryId":1}')).status).toBe(201);
    expect((await post('{"name":"NoKey","categoryId":1}')).status).toBe(201);
    expect(await petsNamed('NoKey')).toHaveLength(2);
  });
});
