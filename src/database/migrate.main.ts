import { PGlite } from '@electric-sql/pglite';
import { ConfigError, loadConfig } from '../config/config.js';
import type { DatabaseConfig } from '../config/database.config.js';
import { acquireDataDirLock } from './data-dir-lock.js';
import { migratePostgres } from './database.js';
import { migrate, MigrationResult } from './migrator.js';
import { pgliteRunner } from './sql-runner.js';

/**
 * The migrate command (`npm run db:migrate`, or `node dist/database/migrate.main.js` in the
 * container image): applies pending migrations to DATABASE_URL, or to the embedded database
 * in DATA_DIR when DATABASE_URL is unset, then exits. Deployments run it once as its own job
 * before rolling out the app; the migrator's advisory lock makes concurrent runs safe.
 * Exit status: 0 done, 1 failed, 78 bad configuration.
 */
async function main(): Promise<number> {
  let config: DatabaseConfig;
  try {
    // Every slice, not just the database's: a bad value anywhere is found before a deployment's first step.
    config = loadConfig().database;
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      return 78; // EX_CONFIG
    }
    throw err;
  }
  const log = (msg: string): void => console.log(msg);
  let result: MigrationResult;
  try {
    if (config.databaseUrl) {
      log(`migrating PostgreSQL at ${describeUrl(config.databaseUrl)} from ${config.migrationsDir}`);
      result = await migratePostgres(config, log);
    } else {
      log(`DATABASE_URL is not set: migrating the embedded database in ${config.dataDir} from ${config.migrationsDir}`);
      result = await migrateEmbedded(config, log);
    }
  } catch (err) {
    console.error(`migration failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  if (result.applied.length === 0) {
    log(`database is up to date (${result.alreadyApplied.length} migration(s) already applied)`);
  } else {
    log(`applied ${result.applied.length} migration(s): ${result.applied.join(', ')}`);
  }
  return 0;
}

async function migrateEmbedded(config: DatabaseConfig, log: (msg: string) => void): Promise<MigrationResult> {
  // Refuses while a server holds the directory (PGlite is one process at a time).
  const lock = acquireDataDirLock(config.dataDir, 'animal-store migrate');
  try {
    const db = await PGlite.create(config.dataDir);
    try {
      return await migrate(pgliteRunner(db), config.migrationsDir, log);
    } finally {
      await db.close();
    }
  } finally {
    lock.release();
  }
}

/** Host, port and database of a connection string, never its password. */
function describeUrl(raw: string): string {
  const url = new URL(raw);
  return `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`migration failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
