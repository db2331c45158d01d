import { databaseConfig, describeDatabaseUrl, migrationConfig } from '../config/database.config.js';
import { EX_CONFIG, loadConfigOrReport } from '../config/exit-on-config-error.js';
import { compileEmbeddedForShortRun, migrateEmbedded } from './embedded-database.js';
import type { MigrationResult } from './migrator.js';
import { migratePostgres } from './pg-database.js';

/**
 * The migrate command (`npm run db:migrate`, or `node dist/database/migrate.main.js` in the
 * container image): applies pending migrations to DATABASE_URL, or to the embedded database
 * in DATA_DIR when DATABASE_URL is unset, then exits. Deployments run it once as its own job
 * before rolling out the app; the migrator's advisory lock makes concurrent runs safe.
 * Through DIRECT_URL when set (PostgreSQL itself when DATABASE_URL goes through a pooler).
 * It reads only the database's settings (the server's, such as METRICS_TOKEN or the API key
 * secrets, are not its business). Exit status: 0 done, 1 failed, 78 bad configuration.
 */
async function main(): Promise<number> {
  const loaded = await loadConfigOrReport({ database: databaseConfig, migration: migrationConfig });
  if (!loaded) return EX_CONFIG;
  const { database: config, migration } = loaded;
  const log = (msg: string): void => console.log(msg);
  let result: MigrationResult;
  try {
    if (migration.migrateUrl) {
      log(`migrating PostgreSQL at ${describeDatabaseUrl(migration.migrateUrl)} from ${config.migrationsDir}`);
      result = await migratePostgres(config, log);
    } else {
      log(`DATABASE_URL is not set: migrating the embedded database in ${config.dataDir} from ${config.migrationsDir}`);
      // Refuses while a server holds the directory (PGlite is one process at a time).
      result = await migrateEmbedded(config, log, 'animal-store migrate');
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

compileEmbeddedForShortRun();
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`migration failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
