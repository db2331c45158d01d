import { issueApiKeyIn } from '../support/api-keys.js';
import { RunningService, startService } from '../support/built-service.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';

/** The built service as its own process, spoken to over a real socket. */
describeEachDatabase('the built service on %s', (kind) => {
  let db: TestDatabase;
  let svc: RunningService;
  let auth: { authorization: string };

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    auth = { authorization: `Bearer ${(await issueApiKeyIn(db)).key}` };
    svc = await startService({ ...db.env, LOG_LEVEL: 'warn' });
  }, 120_000);

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    await db?.drop();
  });

  it('serves the API, stores and returns an animal, and stops cleanly on SIGTERM', async () => {
    expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
    const created = await fetch(`${svc.url}/v1/pets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: '{"name":"Socket","categoryId":9007199254740993}',
    });
    const text = await created.text();
    expect(created.status).toBe(201);
    expect(text).toMatch(/^\{"id":\d+,"name":"Socket","categoryId":9007199254740993,"status":"available"\}$/);
    const id = /"id":(\d+)/.exec(text)![1];
    const fetched = await fetch(`${svc.url}/v1/pets/${id}`, { headers: auth });
    expect(await fetched.text()).toBe(text);
    expect(await svc.stop('SIGTERM')).toBe(0);
  });
});

describe('the embedded database is one process at a time', () => {
  it('refuses a second server on the same DATA_DIR, naming the first, and leaves the data intact', async () => {
    const db = await createTestDatabase('embedded');
    const dir = db.config().database.dataDir;
    const { key } = await issueApiKeyIn(db);
    const auth = { authorization: `Bearer ${key}` };
    const first = await startService({ DATA_DIR: dir, LOG_LEVEL: 'warn' });
    try {
      const created = await fetch(`${first.url}/v1/pets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: '{"name":"Kept","categoryId":1}',
      });
      expect(created.status).toBe(201);
      const second = await startService({ DATA_DIR: dir, LOG_LEVEL: 'warn' });
      expect(await second.exited).not.toBe(0);
      expect(second.output()).toContain(`is in use by process ${first.child.pid}`);
      const list = await fetch(`${first.url}/v1/pets`, { headers: auth });
      expect(await list.json()).toEqual([expect.objectContaining({ name: 'Kept' })]);
    } finally {
      await first.stop();
      await db.drop();
    }
  }, 120_000);
});
