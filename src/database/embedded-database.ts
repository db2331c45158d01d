import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { setFlagsFromString } from 'node:v8';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { DatabaseConfig } from '../config/database.config.js';
import { acquireDataDirLock, DataDirLock } from './data-dir-lock.js';
import type { Database, PreparedStatement } from './database.js';
import { migrate, MigrationResult } from './migrator.js';
import { pgliteRunner } from './sql-runner.js';

/**
 * PostgreSQL settings of the embedded server, after PGlite's own. The data directory's
 * postgresql.conf asks for 128 MB of shared buffers, which PGlite allocates and clears at every
 * start: much of the time an open takes, and memory held for the process's life (the bench's
 * start to ready on the embedded database shows it). One process at a time uses the embedded database (its lock), so a
 * handful of connection slots is plenty, and 32 MB of buffers holds a laptop's catalogue many
 * times over.
 */
export const EMBEDDED_START_PARAMS: readonly string[] = ['-c', 'shared_buffers=32MB', '-c', 'max_connections=5'];

/** The extensions the migrations create, which PGlite loads only when given them (pg_trgm: the key search's index). */
export const EMBEDDED_EXTENSIONS = { pg_trgm };

/**
 * For the commands that open the embedded database for a second or so (the key tool, the
 * migrator), called before it opens: on Node 20, PGlite's WebAssembly is compiled by V8's
 * baseline compiler only (`--liftoff-only`), which costs such a run less CPU than V8's default
 * of optimising it too. Other Node versions, and the server, keep V8's defaults.
 */
export function compileEmbeddedForShortRun(): void {
  if (process.versions.node.startsWith('20.')) setFlagsFromString('--liftoff-only');
}

/** The embedded PGlite in DATA_DIR, locked for this process and migrated on open. */
export async function openEmbedded(
  config: DatabaseConfig,
  log: (msg: string) => void,
  purpose?: string,
): Promise<Database> {
  const { db, lock } = await openMigrated(config, log, purpose);
  return {
    kind: 'embedded',
    adapter: new PrismaPGlite(db),
    withRunner: (fn) => fn(pgliteRunner(db)),
    // PGlite returns int8 as bigint already.
    query: async <T>(statement: PreparedStatement, params: readonly unknown[]) =>
      (await db.query<T>(statement.text, params as unknown[])).rows,
    close: () => closeEmbedded(db, lock),
  };
}

/** Applies pending migrations to the embedded database in DATA_DIR and closes it (the migrate command). */
export async function migrateEmbedded(
  config: DatabaseConfig,
  log: (msg: string) => void,
  purpose?: string,
): Promise<MigrationResult> {
  const { db, lock, migrations } = await openMigrated(config, log, purpose);
  await closeEmbedded(db, lock);
  return migrations;
}

/**
 * The one way into DATA_DIR: take its lock (PGlite is one process at a time, so this refuses
 * while a server or a tool holds it), open PGlite there and apply the pending migrations. On
 * failure it gives back what it took before throwing.
 */
async function openMigrated(
  config: DatabaseConfig,
  log: (msg: string) => void,
  purpose?: string,
): Promise<{ db: PGlite; lock: DataDirLock; migrations: MigrationResult }> {
  const lock = acquireDataDirLock(config.dataDir, purpose);
  let db: PGlite | undefined;
  try {
    db = await PGlite.create(config.dataDir, {
      startParams: [...PGlite.defaultStartParams, ...EMBEDDED_START_PARAMS],
      extensions: EMBEDDED_EXTENSIONS,
    });
    const migrations = await migrate(pgliteRunner(db), config.migrationsDir, log);
    return { db, lock, migrations };
  } catch (err) {
    // The failure to report is err, not whatever closing a half-opened database says.
    await (db ? closeEmbedded(db, lock) : Promise.resolve(lock.release())).catch(() => {});
    throw err;
  }
}

async function closeEmbedded(db: PGlite, lock: DataDirLock): Promise<void> {
  try {
    if (!db.closed) await db.close();
  } finally {
    lock.release();
  }
}
