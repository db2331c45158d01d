import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SqlRunner } from './sql-runner.js';

/**
 * Applies the SQL migrations in prisma/migrations and records them in `_prisma_migrations`
 * exactly as `prisma migrate deploy` does (checksum = SHA-256 hex of migration.sql), so either
 * tool can take over from the other. The service has its own because the Prisma CLI's schema
 * engine is a separately downloaded binary that is not available everywhere this service is built.
 *
 * Concurrency: migrate() holds an advisory lock (withMigrationLock, MIGRATION_LOCK_ID) around
 * applyMigrations(), so two instances starting at once apply each migration once.
 */

/** The key Prisma itself uses for its migration advisory lock, so the two tools exclude each other. */
export const MIGRATION_LOCK_ID = 72707369;

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationError extends Error {}

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export async function readMigrations(dir: string): Promise<MigrationFile[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    throw new MigrationError(`cannot read migrations directory ${dir}: ${(err as Error).message}`);
  }
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | string | null;
  rolled_back_at: Date | string | null;
}

async function appliedRows(db: SqlRunner): Promise<AppliedRow[]> {
  return db.query<AppliedRow>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
  );
}

/** Applies pending migrations; must run while the caller holds the migration lock. */
export async function applyMigrations(
  db: SqlRunner,
  migrations: MigrationFile[],
  log: (msg: string) => void = () => {},
): Promise<MigrationResult> {
  await db.exec(CREATE_TABLE);
  const rows = await appliedRows(db);
  const failed = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
  if (failed) {
    throw new MigrationError(
      `migration ${failed.migration_name} started but did not finish; fix the database and mark it ` +
        `rolled back (prisma migrate resolve --rolled-back ${failed.migration_name}) before retrying`,
    );
  }
  const done = new Map(rows.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r]));
  const result: MigrationResult = { applied: [], alreadyApplied: [] };
  for (const m of migrations) {
    const row = done.get(m.name);
    if (row) {
      if (row.checksum !== m.checksum) {
        log(`warning: migration ${m.name} was modified after it was applied (checksum differs)`);
      }
      result.alreadyApplied.push(m.name);
      continue;
    }
    const id = randomUUID();
    await db.exec('BEGIN');
    try {
      await db.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())`,
        [id, m.checksum, m.name],
      );
      await db.exec(m.sql);
      await db.query(`UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [
        id,
      ]);
      await db.exec('COMMIT');
    } catch (err) {
      await db.exec('ROLLBACK');
      throw new MigrationError(`migration ${m.name} failed: ${(err as Error).message}`);
    }
    log(`applied migration ${m.name}`);
    result.applied.push(m.name);
  }
  return result;
}

/** Runs fn while holding the cluster-wide migration advisory lock. */
export async function withMigrationLock<T>(db: SqlRunner, fn: () => Promise<T>): Promise<T> {
  await db.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
  try {
    return await fn();
  } finally {
    await db.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
  }
}

export async function migrate(db: SqlRunner, dir: string, log?: (msg: string) => void): Promise<MigrationResult> {
  const migrations = await readMigrations(dir);
  return withMigrationLock(db, () => applyMigrations(db, migrations, log));
}

/** Names of migrations present on disk but not finished in the database (readiness). */
export async function pendingMigrations(db: SqlRunner, dir: string): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const [exists] = await db.query<{ t: string | null }>(`SELECT to_regclass('"_prisma_migrations"')::text AS t`);
  if (!exists?.t) return migrations.map((m) => m.name);
  const done = new Set((await appliedRows(db)).filter((r) => r.finished_at !== null).map((r) => r.migration_name));
  return migrations.filter((m) => !done.has(m.name)).map((m) => m.name);
}
