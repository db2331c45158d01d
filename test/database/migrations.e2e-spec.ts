import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { migratePostgres } from '../../src/database/pg-database.js';
import { applyMigrations, pendingMigrations, readMigrations } from '../../src/database/migrator.js';
import { pgClientRunner } from '../../src/database/sql-runner.js';
import { createTestDatabase, describeIfPostgres, TestDatabase } from '../support/databases.js';

describeIfPostgres('migrations on PostgreSQL', () => {
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    // createTestDatabase migrates already; run more migrators against the same database.
    db = await createTestDatabase('postgres');
    client = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('records every migration as Prisma does, with the SHA-256 of its file', async () => {
    const files = await readMigrations('prisma/migrations');
    expect(files.length).toBeGreaterThan(0);
    const rows = await client.query(
      'SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows.rows.map((r) => r.migration_name)).toEqual(files.map((f) => f.name));
    for (const [i, f] of files.entries()) {
      const sha = createHash('sha256')
        .update(readFileSync(`prisma/migrations/${f.name}/migration.sql`))
        .digest('hex');
      expect(rows.rows[i].checksum).toBe(sha);
      expect(rows.rows[i].finished_at).not.toBeNull();
    }
    expect(await pendingMigrations(pgClientRunner(client), 'prisma/migrations')).toEqual([]);
  });

  it('is idempotent and safe when several migrators run at once', async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => migratePostgres(db.config().database, () => {})));
    for (const r of results) expect(r.applied).toEqual([]);
    const count = await client.query('SELECT count(*)::int AS n FROM _prisma_migrations');
    expect(count.rows[0].n).toBe((await readMigrations('prisma/migrations')).length);
  });

  it('applies a fresh database exactly once under a race', async () => {
    const fresh = await createTestDatabase('postgres', { migrate: false });
    try {
      const all = await readMigrations('prisma/migrations');
      const results = await Promise.all([1, 2, 3].map(() => migratePostgres(fresh.config().database, () => {})));
      // Every migration applied by exactly one of the racing migrators.
      expect(results.flatMap((r) => r.applied).sort()).toEqual(all.map((m) => m.name).sort());
      const c = new pg.Client({ connectionString: fresh.env.DATABASE_URL });
      await c.connect();
      const rows = await c.query('SELECT count(*)::int AS n FROM _prisma_migrations');
      await c.end();
      expect(rows.rows[0].n).toBe(all.length);
    } finally {
      await fresh.drop();
    }
  });
});

describeIfPostgres('the audit log migrations over entries written before them (PostgreSQL)', () => {
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase('postgres', { migrate: false });
    client = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('gives old entries their kind of actor, and an admin token its id where its name still finds it', async () => {
    const all = await readMigrations('prisma/migrations');
    const runner = pgClientRunner(client);
    await applyMigrations(
      runner,
      all.filter((m) => m.name < '20261128'),
    );
    // Entries as the service wrote them before actor kinds: the actor as text only.
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO "admin_tokens" ("name", "prefix", "hash") VALUES ('ops', 'asadm_x', repeat('a', 64)) RETURNING "id"::text`,
    );
    await client.query(
      `INSERT INTO "audit_log" ("actor", "action", "key_id", "admin_token_id", "changes") VALUES
         ('cli:root', 'admin_token.created', NULL, $1, '{"name": {"before": null, "after": "ops"}}'),
         ('ops', 'key.created', 7, NULL, '{"name": {"before": null, "after": "App"}}'),
         ('departed', 'key.revoked', 7, NULL, '{"revokedAt": {"before": null, "after": "2026-11-01T00:00:00.000Z"}}'),
         ('system:dev-key', 'key.created', 8, NULL, '{}')`,
      [rows[0].id],
    );
    await applyMigrations(runner, all);
    const migrated = await client.query(
      `SELECT "actor", "actor_kind", "actor_token_id"::text, "action", "changes" FROM "audit_log" ORDER BY "id"`,
    );
    expect(migrated.rows).toEqual([
      {
        actor: 'cli:root',
        actor_kind: 'key_tool',
        actor_token_id: null,
        action: 'admin_token.created',
        changes: { name: { before: null, after: 'ops' } },
      },
      {
        actor: 'ops',
        actor_kind: 'admin_token',
        actor_token_id: rows[0].id,
        action: 'key.created',
        changes: { name: { before: null, after: 'App' } },
      },
      {
        actor: 'departed',
        actor_kind: 'admin_token',
        actor_token_id: null,
        action: 'key.revoked',
        changes: { revokedAt: { before: null, after: '2026-11-01T00:00:00.000Z' } },
      },
      { actor: 'system:dev-key', actor_kind: 'system', actor_token_id: null, action: 'key.created', changes: {} },
    ]);
    // Still append-only afterwards.
    await expect(client.query(`UPDATE "audit_log" SET "actor" = 'x'`)).rejects.toThrow(/append-only/);
  });
});
