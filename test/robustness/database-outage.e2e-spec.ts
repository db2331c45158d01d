import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { issueApiKey } from '../support/api-keys.js';
import { describeIfPostgres } from '../support/databases.js';
import { expectErrorBody } from '../support/error-body.js';
import { AppBehindProxy, startAppBehindProxy } from '../support/app-behind-proxy.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

describeIfPostgres('PostgreSQL outage', () => {
  let setup: AppBehindProxy;
  let app: NestExpressApplication;
  let proxy: TcpProxy;
  let auth: string;

  beforeAll(async () => {
    setup = await startAppBehindProxy();
    ({ app, proxy } = setup);
    auth = `Bearer ${await issueApiKey(app)}`;
  });

  afterAll(async () => {
    await setup?.close();
  });

  const http = () => request(app.getHttpServer());

  it('answers 503 service_unavailable with Retry-After while the database is gone, then recovers by itself', async () => {
    const ok = await http().get('/v1/pets').set('Authorization', auth);
    expect(ok.status).toBe(200);

    await proxy.stop();
    for (const req of [
      http().get('/v1/pets').set('Authorization', auth),
      http()
        .post('/v1/pets')
        .set('Authorization', auth)
        .set('Content-Type', 'application/json')
        .send('{"name":"x","categoryId":1}'),
    ]) {
      const res = await req;
      expect(expectErrorBody(res, 503, 'service_unavailable').details).toBeUndefined();
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(res.text).not.toMatch(/ECONN|prisma|pg_|SELECT/i);
    }
    const ready = await http().get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.code).toBe('service_unavailable');
    // Only the cause: the migrations are applied, their check just could not read them.
    expect(ready.body.message).toBe('The instance is not ready: the database is unreachable.');

    await proxy.start();
    await waitFor(async () => (await http().get('/v1/pets').set('Authorization', auth)).status === 200, {
      what: 'GET /v1/pets to answer 200 again',
    });
    // Readiness reuses an outcome for READINESS_CACHE_MS (1 s): the 503 above may still be it.
    await waitFor(async () => (await http().get('/readyz')).status === 200, { what: '/readyz to answer 200 again' });
  });
});
