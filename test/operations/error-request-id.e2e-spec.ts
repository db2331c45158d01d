import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { startTestApp } from '../support/app.js';
import { issueApiKey } from '../support/api-keys.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { buildRequest, rawExchange } from '../support/raw-http.js';

// Starting an app on a fresh database takes seconds, more on a busy machine.
jest.setTimeout(120_000);

/**
 * `requestId` in every Error body, equal to the response's X-Request-Id (expectErrorBody checks
 * it on every error answer of the HTTP tests); here the places that write an Error body apart
 * from the exception filter, and a caller's own request id.
 */
describeEachDatabase('the request id in Error bodies on %s', (kind) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let port: number;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    app = await startTestApp(db);
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it("carries the caller's well-formed X-Request-Id, so the body alone can be quoted", async () => {
    const key = await issueApiKey(app);
    const res = await request(app.getHttpServer())
      .get('/v1/pets/0')
      .set('Authorization', `Bearer ${key}`)
      .set('X-Request-Id', 'support-case-42');
    expect(expectErrorBody(res, 400, 'invalid_parameter').requestId).toBe('support-case-42');
    const unauthenticated = await request(app.getHttpServer()).get('/v1/pets').set('X-Request-Id', 'bad id');
    expect(expectErrorBody(unauthenticated, 401, 'missing_api_key').requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("is in the answers Node's HTTP parser refuses before any route, with the same X-Request-Id header", async () => {
    const malformed = await rawExchange(port, Buffer.from('GET /v1/pets HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
    expect(expectErrorBody(malformed, 400, 'validation_failed').requestId).toMatch(/^[0-9a-f-]{36}$/);
    const oversized = await rawExchange(
      port,
      buildRequest({ target: '/v1/pets', headers: [`X-Padding: ${'a'.repeat(20_000)}`] }),
    );
    expectErrorBody(oversized, 431, 'headers_too_large');
    const expectation = await rawExchange(
      port,
      buildRequest({ target: '/v1/pets', headers: ['Expect: teapot', 'X-Request-Id: expect-7'] }),
    );
    expect(expectErrorBody(expectation, 417, 'expectation_failed').requestId).toBe('expect-7');
  });
});
