import { defineConfig, type ConfigOf } from './define-config.js';
import { int, str, url } from './env.js';

/** The database: PostgreSQL, or the embedded one; its pool, timeouts and migrations. */
export const databaseConfig = defineConfig('database', (env) => ({
  /** PostgreSQL connection string; undefined selects the embedded database (PGlite). */
  databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
  /** Data directory of the embedded database. */
  dataDir: str(env, 'DATA_DIR', './data'),
  dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 1000),
  dbConnectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', 3000, 100, 600_000),
  dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 10_000, 100, 600_000),
  migrationsDir: str(env, 'MIGRATIONS_DIR', 'prisma/migrations'),
}));
export type DatabaseConfig = ConfigOf<typeof databaseConfig>;
