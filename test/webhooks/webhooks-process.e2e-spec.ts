import request from 'supertest';
import { AdminTokensService } from '../../src/admin-tokens/admin-tokens.service.js';
import { startTestApp } from '../support/app.js';
import { TEST_ACTOR } from '../support/api-keys.js';
import { freePort, startService, type RunningService } from '../support/built-service.js';
import { createTestDatabase, describeIfPostgres, type TestDatabase } from '../support/databases.js';
import { waitFor } from '../support/wait-for.js';
import { Receiver } from './receiver.js';

jest.setTimeout(180_000);

describeIfPostgres('webhooks of the built service (PostgreSQL)', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  let svc: RunningService | undefined;
  let token: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const app = await startTestApp(db);
    ({ token } = await app.get(AdminTokensService).create('ops', TEST_ACTOR));
    await app.close();
    receiver = await new Receiver().start();
    env = { ...db.env, ADMIN_PORT: String(await freePort()) };
  });

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    await receiver?.stop();
    await db?.drop();
  });

  it('an attempt cut by SIGKILL is made again after the restart, with the same webhook-id; SIGTERM then exits 0', async () => {
    // The first request is held unanswered: the service is killed while it waits.
    receiver.answers = [() => undefined];
    svc = await startService(env, 60_000);
    const admin = () => request(`http://127.0.0.1:${env.ADMIN_PORT}`);
    const auth = { Authorization: `Bearer ${token}` };
    const created = await admin()
      .post('/admin/v1/webhooks')
      .set(auth)
      .send({ url: receiver.url, events: ['key.created'] })
      .expect(201);
    const id = (JSON.parse(created.text) as { id: number }).id;
    await admin().post(`/admin/v1/webhooks/${id}/test`).set(auth).expect(202);
    await waitFor(() => receiver.received.length === 1, { what: 'the first attempt' });
    await svc.stop('SIGKILL');
    svc = await startService(env, 60_000);
    await waitFor(() => receiver.received.length === 2, { what: 'the attempt made again', timeoutMs: 120_000 });
    expect(receiver.received[1].headers['webhook-id']).toBe(receiver.received[0].headers['webhook-id']);
    await waitFor(
      async () => {
        const res = await admin().get(`/admin/v1/webhooks/${id}/deliveries`).set(auth);
        return (JSON.parse(res.text) as { state: string }[])[0]?.state === 'succeeded';
      },
      { what: 'the delivery to succeed' },
    );
    // The running queue stops with the service.
    expect(await svc.stop('SIGTERM')).toBe(0);
    svc = undefined;
  });
});
