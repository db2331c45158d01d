import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../../src/config/config.js';
import { migratePostgres } from '../../src/database/pg-database.js';
import { issueApiKeyIn } from '../support/api-keys.js';
import { RunningService, startService } from '../support/built-service.js';
import { createTestDatabase, TestDatabase } from '../support/databases.js';
import { pgbouncerVersion, RunningPgbouncer, startPgbouncer } from '../support/pgbouncer.js';

/*
 * The built service behind Debian's PgBouncer in transaction mode (its usual settings, no
 * ignore_startup_parameters), with Prisma's convention: `pgbouncer=true` on DATABASE_URL and
 * DIRECT_URL for the migrate command. Needs PostgreSQL (DATABASE_URL, the machine's by default).
 */
process.env.DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/postgres';

const STATEMENT_TIMEOUT_MS = 2500;

describe(`the service behind PgBouncer in transaction mode (${pgbouncerVersion()})`, () => {
  let db: TestDatabase;
  let bouncer: RunningPgbouncer;
  let svc: RunningService;
  let apiKey: string;
  let pooledUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    // A pool smaller than the clients' concurrency, so server connections change hands between transactions.
    bouncer = await startPgbouncer(db.env.DATABASE_URL, { poolSize: 4 });
    const name = new URL(db.env.DATABASE_URL).pathname.slice(1);
    pooledUrl = `${bouncer.host}${name}?pgbouncer=true`;
    const env = {
      ...db.env,
      DATABASE_URL: pooledUrl,
      DIRECT_URL: db.env.DATABASE_URL,
      DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    };
    // The migrate command, as a deployment runs it: through DIRECT_URL (it sets the statement timeout for the pooled role).
    await migratePostgres(loadConfig(env).database, () => {});
    apiKey = (await issueApiKeyIn(db)).key;
    svc = await startService({ ...env, DB_POOL_MAX: '16' });
  }, 120_000);

  afterAll(async () => {
    await svc?.stop();
    await bouncer?.stop();
    await db?.drop();
  });

  it('is ready', async () => {
    const res = await fetch(`${svc.url}/readyz`);
    const body = (await res.json()) as { status: string };
    expect({ status: res.status, body: body.status }).toEqual({ status: 200, body: 'ok' });
  });

  it('answers lists, gets, creates and idempotent creates from 32 concurrent clients without an error', async () => {
    const auth = { Authorization: `Bearer ${apiKey}` };
    const json = { ...auth, 'Content-Type': 'application/json' };
    const seed = await fetch(`${svc.url}/v1/pets`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'seed', categoryId: 1 }),
    });
    const seedText = await seed.text();
    expect({ status: seed.status, body: seedText }).toEqual({
      status: 201,
      body: expect.stringContaining('"name":"seed"'),
    });
    const seedId = /"id":(\d+)/.exec(seedText)?.[1];
    const failures: string[] = [];
    let sent = 0;
    const idempotencyKeys = Array.from({ length: 20 }, () => randomUUID());
    const check = async (res: Response, wanted: number, what: string) => {
      sent += 1;
      const text = await res.text();
      if (res.status !== wanted) failures.push(`${what}: ${res.status} ${text}`);
      return text;
    };
    const operation = async (i: number) => {
      switch (i % 4) {
        case 0: {
          const text = await check(await fetch(`${svc.url}/v1/pets?limit=20`, { headers: auth }), 200, 'list');
          if (!text.startsWith('[')) failures.push(`list body: ${text}`);
          break;
        }
        case 1: {
          const text = await check(await fetch(`${svc.url}/v1/pets/${seedId}`, { headers: auth }), 200, 'get');
          if (!text.includes('"name":"seed"')) failures.push(`get body: ${text}`);
          break;
        }
        case 2:
          await check(
            await fetch(`${svc.url}/v1/pets`, {
              method: 'POST',
              headers: json,
              body: JSON.stringify({ name: `p${i}`, categoryId: 1 }),
            }),
            201,
            'create',
          );
          break;
        default: {
          // Each key is used several times: the first creates, the others replay (or meet it in flight: 409).
          const key = idempotencyKeys[Math.floor(i / 4) % idempotencyKeys.length];
          const res = await fetch(`${svc.url}/v1/pets`, {
            method: 'POST',
            headers: { ...json, 'Idempotency-Key': key },
            body: JSON.stringify({ name: `idem-${key}`, categoryId: 1 }),
          });
          if (res.status === 409) {
            sent += 1;
            await res.text();
            return;
          }
          await check(res, 201, 'idempotent create');
        }
      }
    };
    let next = 0;
    const total = 800;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < total) await operation(next++).catch((err: unknown) => failures.push(String(err)));
      }),
    );
    expect(failures.slice(0, 5)).toEqual([]);
    expect(sent).toBe(total);
    // Every idempotency key created exactly one pet.
    const sql = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await sql.connect();
    try {
      const rows = (
        await sql.query<{ n: string }>(`SELECT count(*) AS n FROM pets WHERE name LIKE 'idem-%' GROUP BY name`)
      ).rows;
      expect(rows.map((r) => Number(r.n))).toEqual(idempotencyKeys.map(() => 1));
    } finally {
      await sql.end();
    }
    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(200);
    await ready.text();
  }, 120_000);

  it("bounds a statement through the pooler with the server's statement_timeout", async () => {
    // The role the service connects as, through PgBouncer, sending no startup parameter.
    const client = new pg.Client({ connectionString: pooledUrl.replace('?pgbouncer=true', '') });
    await client.connect();
    try {
      expect(
        (await client.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0].statement_timeout,
      ).toBe(`${STATEMENT_TIMEOUT_MS}ms`);
      await expect(client.query('SELECT pg_sleep(60)')).rejects.toMatchObject({ code: '57014' });
    } finally {
      await client.end();
    }
  }, 30_000);
});
