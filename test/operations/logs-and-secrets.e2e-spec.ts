import { Controller, Get, Module, Param } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import request from 'supertest';
import { generateAdminToken } from '../../src/admin-tokens/admin-token-format.js';
import { Public } from '../../src/auth/public.decorator.js';
import { startTestApp } from '../support/app.js';
import { issueApiKey } from '../support/api-keys.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { buildRequest, rawExchange } from '../support/raw-http.js';
import { waitFor } from '../support/wait-for.js';

/**
 * What the service writes about what a client sent (docs/security.md, "Secrets in logs" and
 * "Log levels"): no API key, admin token or webhook secret sent in the wrong place reaches a log
 * line or a metric label, raw or percent-encoded; a refusal of what the client chose is info,
 * with the client's address; error is for the service's own faults.
 */

/** A route that fails unexpectedly, quoting its parameter in the error (as a careless handler would). */
@Public()
@Controller('v1/failing')
class FailingController {
  @Get(':anything')
  fail(@Param('anything') anything: string): never {
    throw new Error(`lookup failed for ${anything}`);
  }
}

@Module({ controllers: [FailingController] })
class FailingModule {}

type Line = Record<string, unknown>;

/** Every line the app's logger writes, raw and parsed. */
function capture(): { stream: Writable; text: () => string; lines: () => Line[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const text = () => chunks.join('');
  const lines = () =>
    text()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Line);
  return { stream, text, lines };
}

/** Percent-decoding that never throws, twice (for doubly encoded text). */
function decodeLoosely(text: string): string {
  const once = (t: string) => t.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return once(once(text));
}

/** Percent-encodes every character of `text`, hex digits in alternating case. */
function encodeAll(text: string): string {
  return [...text]
    .map((c, i) => {
      const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
      return `%${i % 2 === 0 ? hex.toUpperCase() : hex.toLowerCase()}`;
    })
    .join('');
}

describeEachDatabase('logs hold no secret and mean what their level says, on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let port: number;
  let key: string;
  const log = capture();
  const adminToken = generateAdminToken();
  const webhookSecret = `whsec_${randomBytes(32).toString('base64')}`;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db, { env: { LOG_LEVEL: 'info' }, imports: [FailingModule], logTo: log.stream });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
    key = await issueApiKey(app);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  /** The first line written about the request with this id, once it is written. */
  const lineOf = (requestId: string, msg?: string): Promise<Line> =>
    waitFor(() => log.lines().find((l) => l.requestId === requestId && (msg === undefined || l.msg === msg)), {
      what: `the log line of ${requestId}`,
    });

  /** Whether 10 consecutive characters of a secret's body are anywhere in `text`, decoded or not. */
  const leaks = (secret: string, text: string): boolean => {
    const body = secret.slice(secret.indexOf('_') + 1);
    const plain = decodeLoosely(text);
    for (let i = 0; i + 10 <= body.length; i++) if (plain.includes(body.slice(i, i + 10))) return true;
    return false;
  };
  const secrets = () => [key, adminToken, webhookSecret];

  describe('no secret reaches a log line or a metric label', () => {
    const keyPrefix = () => key.slice(0, key.indexOf('_') + 1);
    const cases: [string, () => { path: string; headers?: Record<string, string> }, () => string][] = [
      ['an API key in ?api_key=', () => ({ path: `/v1/pets?api_key=${key}&limit=5` }), keyPrefix],
      ['an admin token in ?access_token=', () => ({ path: `/v1/pets?access_token=${adminToken}` }), () => 'asadm_'],
      [
        'a webhook secret in the query, percent-encoded',
        () => ({ path: `/v1/pets?secret=${encodeURIComponent(webhookSecret)}` }),
        () => 'whsec_',
      ],
      [
        'an API key as the path of a pet',
        () => ({ path: `/v1/pets/${key}`, headers: { Authorization: `Bearer ${key}` } }),
        keyPrefix,
      ],
      [
        'an API key as the path of a pet, every character percent-encoded',
        () => ({ path: `/v1/pets/${encodeAll(key)}`, headers: { Authorization: `Bearer ${key}` } }),
        keyPrefix,
      ],
      ['an API key in X-Api-Key', () => ({ path: '/v1/pets', headers: { 'X-Api-Key': key } }), () => ''],
    ];

    it.each(cases)('%s: the access line says where it was, and holds none of it', async (_what, sent, marker) => {
      const { path, headers = {} } = sent();
      const requestId = randomUUID();
      const req = request(app.getHttpServer()).get(path).set('X-Request-Id', requestId);
      for (const [name, value] of Object.entries(headers)) req.set(name, value);
      const res = await req;
      expect(res.headers['x-request-id']).toBe(requestId);
      const line = await lineOf(requestId, 'request completed');
      expect(line.status).toBe(res.status);
      expect(line.ip).toMatch(/127\.0\.0\.1$/);
      if (marker() !== '') expect(line.url).toContain(`${marker()}[REDACTED]`);
      for (const secret of secrets()) expect(leaks(secret, log.text())).toBe(false);
      expect(log.text()).not.toContain('Bearer');
    });

    it('never reuses an X-Request-Id that is a key: the response and the line get a new id', async () => {
      const res = await request(app.getHttpServer()).get('/v1/pets').set('X-Request-Id', key);
      expectErrorBody(res, 401, 'missing_api_key');
      expect(res.headers['x-request-id']).not.toBe(key);
      expect(res.body.requestId).toBe(res.headers['x-request-id']);
      await lineOf(res.headers['x-request-id'] as string, 'request completed');
      expect(leaks(key, log.text())).toBe(false);
    });

    it("redacts the error log of the service's own fault, message and stack, and logs it at error with the request id", async () => {
      const requestId = randomUUID();
      const res = await request(app.getHttpServer())
        .get(`/v1/failing/${key}`)
        .set('X-Request-Id', requestId)
        .set('Authorization', `Bearer ${key}`);
      expectErrorBody(res, 500, 'internal_error');
      const error = await lineOf(
        requestId,
        `unhandled error on GET /v1/failing/${keyPrefix()}[REDACTED]: Error: lookup failed for ${keyPrefix()}[REDACTED]`,
      );
      expect(error.level).toBe('error');
      expect(JSON.stringify(error.err)).toContain(`${keyPrefix()}[REDACTED]`);
      const access = await lineOf(requestId, 'request completed');
      expect(access.level).toBe('error');
      expect(access.ip).toMatch(/127\.0\.0\.1$/);
      expect(leaks(key, log.text())).toBe(false);
    });

    it('labels metrics with route templates: a key in a path is not in /metrics', async () => {
      await request(app.getHttpServer()).get(`/v1/pets/${key}`).set('Authorization', `Bearer ${key}`);
      await request(app.getHttpServer()).get(`/v1/nowhere/${key}?api_key=${key}`);
      const metrics = await request(app.getHttpServer()).get('/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.text).toMatch(/route="\/v1\/pets\/:petId"/);
      for (const secret of secrets()) expect(leaks(secret, metrics.text)).toBe(false);
    });
  });

  describe('a refusal of what the client chose is info, with its address', () => {
    it('Transfer-Encoding: gzip, chunked (501) writes an info access line naming the client', async () => {
      const requestId = randomUUID();
      const res = await rawExchange(
        port,
        buildRequest({
          method: 'POST',
          target: '/v1/pets',
          headers: [
            `Authorization: Bearer ${key}`,
            'Content-Type: application/json',
            'Transfer-Encoding: gzip, chunked',
            `X-Request-Id: ${requestId}`,
          ],
          body: '0\r\n\r\n',
        }),
      );
      expectErrorBody(res, 501, 'not_implemented');
      const line = await lineOf(requestId, 'request completed');
      expect(line).toMatchObject({ level: 'info', status: 501, method: 'POST' });
      expect(line.ip).toMatch(/127\.0\.0\.1$/);
    });

    it('CONNECT (501) writes an info line naming the client, with the id of its answer', async () => {
      const res = await rawExchange(
        port,
        Buffer.from(`CONNECT ${encodeAll('x')}.example:443 HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      expectErrorBody(res, 501, 'not_implemented', /CONNECT/);
      const line = await lineOf(res.headers['x-request-id'], 'request refused');
      expect(line).toMatchObject({ level: 'info', status: 501, code: 'not_implemented', method: 'CONNECT' });
      expect(line.ip).toMatch(/127\.0\.0\.1$/);
    });

    it('malformed HTTP (400) writes an info line naming the client and what was wrong', async () => {
      const res = await rawExchange(port, Buffer.from('GET /v1/pets HTTP/9.9 extra\r\n\r\n'));
      expectErrorBody(res, 400, 'validation_failed');
      const line = await lineOf(res.headers['x-request-id'], 'request refused');
      expect(line).toMatchObject({ level: 'info', status: 400, code: 'validation_failed' });
      expect(line.reason).toMatch(/^HPE_/);
      expect(line.ip).toMatch(/127\.0\.0\.1$/);
    });

    it('an unknown Expect (417) writes an info line naming the client', async () => {
      const requestId = randomUUID();
      const res = await rawExchange(
        port,
        buildRequest({ target: '/v1/pets', headers: ['Expect: teapot', `X-Request-Id: ${requestId}`] }),
      );
      expect(res.status).toBe(417);
      const line = await lineOf(requestId, 'request refused');
      expect(line).toMatchObject({ level: 'info', status: 417, method: 'GET', url: '/v1/pets' });
      expect(line.ip).toMatch(/127\.0\.0\.1$/);
    });

    it('writes no error line for any of them: error is for the service own faults', () => {
      const errors = log.lines().filter((l) => l.level === 'error' || l.level === 'fatal');
      // Only the failing route's two lines (its error log and its 500 access line) are errors.
      expect(errors.map((l) => String(l.msg))).toEqual(
        errors.map(() => expect.stringMatching(/^(unhandled error on GET \/v1\/failing\/|request completed$)/)),
      );
      for (const line of errors.filter((l) => l.msg === 'request completed')) expect(line.status).toBe(500);
    });
  });
});
