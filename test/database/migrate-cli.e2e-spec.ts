import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { readMigrations } from '../../src/database/migrator.js';
import { buildService } from '../support/built-service.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';

/** The migrate command as the container image runs it: `node dist/database/migrate.main.js`. */
function migrateCli(env: Record<string, string>): { status: number | null; out: string } {
  const script = path.join(path.dirname(buildService()), 'database', 'migrate.main.js');
  const run = spawnSync(process.execPath, [script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

describeEachDatabase('the migrate command on %s', (kind) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(kind, { migrate: false });
  }, 120_000);

  afterAll(async () => {
    await db?.drop();
  });

  it('applies every migration once, says what it did, and is idempotent', async () => {
    const names = (await readMigrations('prisma/migrations')).map((m) => m.name);
    // As the image's migrate job runs it: production, and only the database's settings (no
    // METRICS_TOKEN, no API key secrets: those are the server's).
    const first = migrateCli({ ...db.env, NODE_ENV: 'production', LOG_LEVEL: 'info' });
    expect(first.out).not.toContain('configuration error');
    expect(first.status).toBe(0);
    expect(first.out).toContain(`applied ${names.length} migration(s): ${names.join(', ')}`);
    const again = migrateCli(db.env);
    expect(again.status).toBe(0);
    expect(again.out).toContain(`database is up to date (${names.length} migration(s) already applied)`);
    if (kind === 'postgres') expect(first.out).not.toMatch(/postgres@|:\/\//);
  });
});

describe('the migrate command failing', () => {
  it('exits 1 with a clear message when the database cannot be reached', () => {
    const run = migrateCli({
      DATABASE_URL: 'postgresql://postgres:hunter2@127.0.0.1:1/none',
      DB_CONNECT_TIMEOUT_MS: '500',
    });
    expect(run.status).toBe(1);
    expect(run.out).toMatch(/migration failed: .*ECONNREFUSED/);
    expect(run.out).not.toContain('hunter2');
  });

  it('exits 78 on bad configuration, naming the variable', () => {
    const run = migrateCli({ DATABASE_URL: 'mysql://localhost/x' });
    expect(run.status).toBe(78);
    expect(run.out).toMatch(/DATABASE_URL/);
  });
});
