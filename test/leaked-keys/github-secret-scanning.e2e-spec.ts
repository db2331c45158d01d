import type { NestExpressApplication } from '@nestjs/platform-express';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { generateApiKey } from '../../src/api-keys/api-key-format.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { createTestDatabase, describeEachDatabase, type TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { auditEntries, forgedKey, keyInfo } from './support.js';

const SECRET = 'leaked-keys-test-checksum-secret-0123456789';
const URL_OF_MATCH = 'https://github.com/octo/leaky/blob/0123abc/config.env';

function keyPair(): { privateKey: KeyObject; pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** GitHub's keys file, as `GET /meta/public_keys/secret_scanning` answers it. */
function keysFile(keys: { id: string; pem: string; current: boolean }[]): string {
  return JSON.stringify({
    public_keys: keys.map((k) => ({ key_identifier: k.id, key: k.pem, is_current: k.current })),
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describeEachDatabase('POST /v1/secret-scanning/github (%s)', (kind) => {
  const current = keyPair();
  const retired = keyPair();
  const stranger = keyPair();
  const dir = mkdtempSync(path.join(tmpdir(), 'github-keys-'));
  const file = path.join(dir, 'secret_scanning.json');
  const clock = new FakeClock(new Date());
  let db: TestDatabase;
  let app: NestExpressApplication;

  /** A report signed as GitHub signs it: the raw body, by `signer`, named `keyId`. */
  const send = (body: string, keyId: string, signer: KeyObject, signature?: string) =>
    request(app.getHttpServer())
      .post('/v1/secret-scanning/github')
      .set('Content-Type', 'application/json')
      .set('Github-Public-Key-Identifier', keyId)
      .set('Github-Public-Key-Signature', signature ?? sign('sha256', Buffer.from(body), signer).toString('base64'))
      .send(body);
  const pets = (key: string) => request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${key}`);
  const issue = async (name: string) => {
    const { info, key } = await app.get(ApiKeysService).create({ name, plan: 'free' }, TEST_ACTOR);
    return { id: info.id.toString(), key };
  };

  beforeAll(async () => {
    writeFileSync(
      file,
      keysFile([
        { id: 'current-id', pem: current.pem, current: true },
        { id: 'retired-id', pem: retired.pem, current: false },
      ]),
    );
    db = await createTestDatabase(kind);
    app = await startTestApp(db, {
      clock,
      env: { API_KEY_CHECKSUM_SECRET: SECRET, SECRET_SCANNING_GITHUB_KEYS: file },
    });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('revokes the keys of a report signed by the current key and labels every token', async () => {
    const { id, key } = await issue('pushed to GitHub');
    const unknown = generateApiKey(SECRET);
    const body = JSON.stringify([
      { token: key, type: 'animal_store_api_key', url: URL_OF_MATCH, source: 'content' },
      { token: unknown, type: 'animal_store_api_key', url: URL_OF_MATCH, source: 'content' },
      { token: 'not-a-key', type: 'animal_store_api_key', url: URL_OF_MATCH, source: 'content' },
      { token: key, type: 'animal_store_api_key', url: `${URL_OF_MATCH}#L2`, source: 'commit' },
    ]);
    const res = await send(body, 'current-id', current.privateKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { token_hash: sha256(key), label: 'true_positive' },
      { token_hash: sha256(unknown), label: 'false_positive' },
      { token_hash: sha256('not-a-key'), label: 'false_positive' },
      { token_hash: sha256(key), label: 'true_positive' },
    ]);
    expect((await pets(key)).status).toBe(401);
    const info = await keyInfo(app, id);
    expect(info.leakedAt).not.toBeNull();
    const entries = (await auditEntries(app)).filter((e) => e.keyId === BigInt(id) && e.action !== 'key.created');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actor: 'system:secret-scanning',
      actorKind: 'system',
      action: 'key.revoked',
      changes: {
        revokedAt: { before: null, after: info.revokedAt?.toISOString() },
        leakedAt: { before: null, after: info.leakedAt?.toISOString() },
        reason: { before: null, after: 'leaked' },
        url: { before: null, after: URL_OF_MATCH },
      },
    });

    // The same signed body again (a replay): the same answer, nothing changed, nothing recorded.
    const count = (await auditEntries(app)).length;
    const replay = await send(body, 'current-id', current.privateKey);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(res.body);
    expect((await auditEntries(app)).length).toBe(count);
    expect((await keyInfo(app, id)).leakedAt).toEqual(info.leakedAt);
  });

  it('refuses a report whose signature does not verify, with nothing read or changed', async () => {
    const { id, key } = await issue('still safe');
    const body = JSON.stringify([{ token: key, type: 'animal_store_api_key', url: URL_OF_MATCH, source: 'content' }]);
    const good = sign('sha256', Buffer.from(body), current.privateKey).toString('base64');
    const refusals: [string, request.Test][] = [
      ['a body changed after signing', send(`${body} `, 'current-id', current.privateKey, good)],
      ['a signature by another key', send(body, 'current-id', stranger.privateKey)],
      ['an unknown key id', send(body, 'unknown-id', current.privateKey)],
      ['a key marked not current', send(body, 'retired-id', retired.privateKey)],
      ['a signature that is not base64', send(body, 'current-id', current.privateKey, '%%%')],
      [
        'a signature that is not DER',
        send(body, 'current-id', current.privateKey, Buffer.from('hello').toString('base64')),
      ],
      [
        'no headers',
        request(app.getHttpServer())
          .post('/v1/secret-scanning/github')
          .set('Content-Type', 'application/json')
          .send(body),
      ],
      ['a huge signature', send(body, 'current-id', current.privateKey, 'A'.repeat(8_000))],
    ];
    for (const [what, pending] of refusals) {
      const res = await pending;
      expect([what, res.status]).toEqual([what, 401]);
      expectErrorBody(res, 401, 'invalid_signature');
      expect(res.headers['www-authenticate']).toBe('Github-Public-Key-Signature realm="secret-scanning"');
    }
    expect((await pets(key)).status).toBe(200);
    expect((await keyInfo(app, id)).leakedAt).toBeNull();
    expect(await app.get(MetricsService).render()).toMatch(
      /leaked_key_report_refusals_total\{source="github",code="invalid_signature"\} 8/,
    );
  });

  it('refuses hostile bodies clearly: malformed, not an array, oversized, too many matches', async () => {
    expectErrorBody(await send('[{"token": ', 'current-id', current.privateKey), 400, 'malformed_json');
    expectErrorBody(await send('{"token": "x"}', 'current-id', current.privateKey), 400, 'validation_failed', /array/);
    expectErrorBody(await send('[{"token": 7}]', 'current-id', current.privateKey), 400, 'validation_failed', /token/);
    const many = JSON.stringify(Array.from({ length: 1_001 }, (_, i) => ({ token: String(i) })));
    expectErrorBody(await send(many, 'current-id', current.privateKey), 400, 'validation_failed', /at most 1000/);
    const huge = JSON.stringify([{ token: 'x'.repeat(128 * 1024) }]);
    expectErrorBody(await send(huge, 'current-id', current.privateKey), 413, 'payload_too_large');
    const forged = JSON.stringify(Array.from({ length: 1_000 }, (_, i) => ({ token: forgedKey(i) })));
    const res = await send(forged, 'current-id', current.privateKey);
    expect(res.status).toBe(200);
    expect(new Set((res.body as { label: string }[]).map((l) => l.label))).toEqual(new Set(['false_positive']));
  });

  it('reads a replaced keys file within seconds, so GitHub’s rotated key is taken', async () => {
    const next = keyPair();
    const body = '[]';
    expectErrorBody(await send(body, 'next-id', next.privateKey), 401, 'invalid_signature');
    writeFileSync(
      file,
      keysFile([
        { id: 'current-id', pem: current.pem, current: false },
        { id: 'next-id', pem: next.pem, current: true },
      ]),
    );
    clock.set(new Date(clock.now().getTime() + 11_000));
    const res = await send(body, 'next-id', next.privateKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expectErrorBody(await send(body, 'current-id', current.privateKey), 401, 'invalid_signature');
  });
});

describeEachDatabase('POST /v1/secret-scanning/github while SECRET_SCANNING_GITHUB_KEYS is unset (%s)', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('is no route: 404 as any unknown path', async () => {
    const res = await request(app.getHttpServer())
      .post('/v1/secret-scanning/github')
      .set('Content-Type', 'application/json')
      .send('[]');
    expectErrorBody(res, 404, 'route_not_found');
  });
});
