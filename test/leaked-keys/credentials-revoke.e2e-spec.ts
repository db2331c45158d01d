import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { ApiKeysRepository } from '../../src/api-keys/api-keys.repository.js';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { generateApiKey } from '../../src/api-keys/api-key-format.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { startTestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { createTestDatabase, describeEachDatabase, type TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { waitFor } from '../support/wait-for.js';
import { auditEntries, forgedKey, keyInfo } from './support.js';

const SECRET = 'leaked-keys-test-checksum-secret-0123456789';
const ENV = { API_KEY_CHECKSUM_SECRET: SECRET, TRUST_PROXY: 'loopback' };

async function issue(app: NestExpressApplication, name = 'exposed') {
  const { info, key } = await app.get(ApiKeysService).create({ name, plan: 'free' }, TEST_ACTOR);
  return { id: info.id.toString(), key };
}

describeEachDatabase('POST /v1/credentials/revoke (%s)', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  /** Each test reports from an address of its own, so the hourly budget of one never reaches another. */
  let address = 0;
  const revoke = (body: unknown, from = `198.51.100.${++address}`) =>
    request(app.getHttpServer())
      .post('/v1/credentials/revoke')
      .set('X-Forwarded-For', from)
      .send(body as object);
  const pets = (key: string) => request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key}`);

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { env: ENV });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('revokes a reported live key, records the leak once, and answers only how many strings it got', async () => {
    const { id, key } = await issue(app);
    expect((await pets(key)).status).toBe(200);

    const res = await revoke({ credentials: [key] });
    expect(res.status).toBe(202);
    expect(res.text).toBe('{"received":1}');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();

    const refused = await waitFor(async () => ((await pets(key)).status === 401 ? pets(key) : undefined), {
      what: 'the reported key to be refused',
      timeoutMs: 5_000,
    });
    expectErrorBody(refused, 401, 'invalid_api_key');
    const info = await keyInfo(app, id);
    expect(info.revokedAt).not.toBeNull();
    expect(info.leakedAt).toEqual(info.revokedAt);

    const [entry] = await auditEntries(app, 1);
    expect(entry).toMatchObject({
      actor: 'system:credential-revocation',
      actorKind: 'system',
      action: 'key.revoked',
      keyId: BigInt(id),
      changes: {
        revokedAt: { before: null, after: info.revokedAt?.toISOString() },
        leakedAt: { before: null, after: info.leakedAt?.toISOString() },
        reason: { before: null, after: 'leaked' },
      },
    });
    expect(Object.keys(entry.changes).sort()).toEqual(['leakedAt', 'reason', 'revokedAt']);

    // Reported again, with a duplicate: the same answer, nothing changed, nothing recorded.
    const before = (await auditEntries(app)).length;
    const again = await revoke({ credentials: [key, key] });
    expect(again.status).toBe(202);
    expect(again.text).toBe('{"received":2}');
    expect((await auditEntries(app)).length).toBe(before);
    expect((await keyInfo(app, id)).leakedAt).toEqual(info.leakedAt);
  });

  it('answers byte for byte the same for a live key, a revoked one, an unknown one and garbage', async () => {
    const live = await issue(app, 'oracle live');
    const revoked = await issue(app, 'oracle revoked');
    await app.get(ApiKeysService).revoke(BigInt(revoked.id), TEST_ACTOR);
    const cases = {
      live: [live.key],
      revoked: [revoked.key],
      unknown: [generateApiKey(SECRET)],
      forged: [forgedKey(1)],
      garbage: ['hello'],
      empty: [''],
    };
    const answers: Record<string, string> = {};
    for (const [name, credentials] of Object.entries(cases)) {
      const res = await revoke({ credentials });
      const { 'x-request-id': _id, date: _date, ...headers } = res.headers;
      answers[name] = `${res.status} ${JSON.stringify(headers)} ${res.text}`;
    }
    expect(new Set(Object.values(answers)).size).toBe(1);
    expect(answers.live).toMatch(/^202 .* \{"received":1\}$/);
    expect((await pets(live.key)).status).toBe(401);
  });

  it('drops strings that are not keys of ours without looking anything up', async () => {
    const lookups = jest.spyOn(ApiKeysRepository.prototype, 'findSecretsByHashes');
    try {
      const credentials = [
        ...Array.from({ length: 998 }, (_, i) => forgedKey(i)),
        'x'.repeat(10_000),
        `ask2_${'A'.repeat(65)}`, // the shape of a version 2 key, without its tag
      ];
      const res = await revoke({ credentials });
      expect(res.status).toBe(202);
      expect(lookups).not.toHaveBeenCalled();
      // A version 1 key's CRC anyone can compute: such a key is looked up, all of them in one statement.
      expect((await revoke({ credentials: [generateApiKey(), generateApiKey()] })).status).toBe(202);
      expect(lookups).toHaveBeenCalledTimes(1);
    } finally {
      lookups.mockRestore();
    }
  });

  it('refuses what is not 1 to 1,000 strings, clearly and with nothing revoked', async () => {
    const { key } = await issue(app, 'bystander');
    const cases: [unknown, RegExp][] = [
      [{ credentials: [] }, /at least 1/],
      [{ credentials: Array.from({ length: 1_001 }, () => key) }, /at most 1000/],
      [{ credentials: [key, 42] }, /only strings/],
      [{ credentials: key }, /array/],
      [{ credentials: [key], extra: true }, /extra/],
      [[key], /object/],
    ];
    for (const [body, message] of cases) expectErrorBody(await revoke(body), 400, 'validation_failed', message);
    expectErrorBody(await revoke(undefined), 400, 'validation_failed');
    const malformed = await request(app.getHttpServer())
      .post('/v1/credentials/revoke')
      .set('X-Forwarded-For', `198.51.100.${++address}`)
      .set('Content-Type', 'application/json')
      .send(`{"credentials": ["${key}"`);
    expectErrorBody(malformed, 400, 'malformed_json');
    const text = await request(app.getHttpServer())
      .post('/v1/credentials/revoke')
      .set('X-Forwarded-For', `198.51.100.${++address}`)
      .set('Content-Type', 'text/plain')
      .send(key);
    expectErrorBody(text, 415, 'unsupported_media_type');
    expectErrorBody(
      await revoke({ credentials: [key] }, '198.51.100.250').query({ dryRun: 1 }),
      400,
      'unknown_parameter',
    );
    expect((await pets(key)).status).toBe(200);
  });

  it('takes a body up to 128 KiB, past the 16 KiB of other operations, and refuses a larger one with 413', async () => {
    const { key } = await issue(app, 'large report');
    const base = JSON.stringify({ credentials: ['', key] });
    const fits = JSON.stringify({ credentials: ['p'.repeat(128 * 1024 - Buffer.byteLength(base)), key] });
    expect(Buffer.byteLength(fits)).toBe(128 * 1024);
    const ok = await request(app.getHttpServer())
      .post('/v1/credentials/revoke')
      .set('X-Forwarded-For', `198.51.100.${++address}`)
      .set('Content-Type', 'application/json')
      .send(fits);
    expect(ok.status).toBe(202);
    expect(ok.body).toEqual({ received: 2 });
    expect((await pets(key)).status).toBe(401);

    const tooLarge = await request(app.getHttpServer())
      .post('/v1/credentials/revoke')
      .set('X-Forwarded-For', `198.51.100.${++address}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ credentials: ['p'.repeat(128 * 1024)] }));
    expectErrorBody(tooLarge, 413, 'payload_too_large', /at most 131072 bytes/);
  });

  it('gives each client address 60 reports an hour, forged keys by the thousand included, then 429 with Retry-After', async () => {
    const lookups = jest.spyOn(ApiKeysRepository.prototype, 'findSecretsByHashes');
    const from = '203.0.113.7';
    try {
      const forged = Array.from({ length: 1_000 }, (_, i) => forgedKey(i));
      for (let i = 0; i < 60; i++) expect((await revoke({ credentials: forged }, from)).status).toBe(202);
      const { key } = await issue(app, 'after the budget');
      const refused = await revoke({ credentials: [key] }, from);
      expectErrorBody(refused, 429, 'rate_limit_exceeded', /60 per hour/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
      expect(lookups).not.toHaveBeenCalled();
      expect((await pets(key)).status).toBe(200);
      // Another address has its own budget; an API key sent along changes nothing.
      const other = await revoke({ credentials: [forgedKey(0)] }, '203.0.113.8').set('Authorization', `Bearer ${key}`);
      expect(other.status).toBe(202);
    } finally {
      lookups.mockRestore();
    }
    const metrics = await app.get(MetricsService).render();
    expect(metrics).toMatch(
      /leaked_key_report_refusals_total\{source="credentials_revoke",code="rate_limit_exceeded"\} 1/,
    );
    expect(metrics).toMatch(/leaked_key_reports_total\{source="credentials_revoke",outcome="revoked"\} [1-9]/);
    expect(metrics).toMatch(/leaked_key_reports_total\{source="credentials_revoke",outcome="invalid"\} [1-9]/);
  });
});

describeEachDatabase('LEAKED_KEY_ACTION=notify (%s)', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { env: { ...ENV, LEAKED_KEY_ACTION: 'notify' } });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('records the leak and leaves the key working; a second report records nothing', async () => {
    const { id, key } = await issue(app);
    const post = () =>
      request(app.getHttpServer())
        .post('/v1/credentials/revoke')
        .send({ credentials: [key] });
    const res = await post();
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ received: 1 });
    const info = await keyInfo(app, id);
    expect(info.revokedAt).toBeNull();
    expect(info.leakedAt).not.toBeNull();
    expect((await request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key}`)).status).toBe(200);
    const [entry] = await auditEntries(app, 1);
    expect(entry).toMatchObject({
      actor: 'system:credential-revocation',
      action: 'key.leaked',
      keyId: BigInt(id),
      changes: {
        leakedAt: { before: null, after: info.leakedAt?.toISOString() },
        reason: { before: null, after: 'leaked' },
      },
    });
    expect(entry.changes.revokedAt).toBeUndefined();
    const count = (await auditEntries(app)).length;
    expect((await post()).status).toBe(202);
    expect((await auditEntries(app)).length).toBe(count);
  });
});
