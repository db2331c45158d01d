import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { migratePostgres } from '../src/database/pg-database.js';
import { pendingMigrations, readMigrations } from '../src/database/migrator.js';
import { pgClientRunner } from '../src/database/sql-runner.js';
import { createTestDatabase, describeIfPostgres, TestDatabase } from './support/databases.js';

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
