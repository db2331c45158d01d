import { defineConfig, type ConfigOf } from './define-config.js';
import { ConfigError, int, str, url } from './env.js';

/** The database: PostgreSQL, or the embedded one; its pool, timeouts and migrations. */
export const databaseConfig = defineConfig('database', (env) => {
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  return {
    /** PostgreSQL connection string; undefined selects the embedded database (PGlite). */
    databaseUrl,
    /**
     * `pgbouncer=true` on DATABASE_URL (Prisma's convention): a pooler in transaction mode sits
     * in front of PostgreSQL, so no named prepared statements and no startup parameters.
     */
    dbPooler: poolerFlag(databaseUrl),
    /** PostgreSQL itself, bypassing the pooler, for the migrate command (Prisma's directUrl). */
    directUrl: url(env, 'DIRECT_URL', ['postgres:', 'postgresql:']),
    /** Data directory of the embedded database. */
    dataDir: str(env, 'DATA_DIR', './data'),
    dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 1000),
    dbConnectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', 3000, 100, 600_000),
    dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 10_000, 100, 600_000),
    migrationsDir: str(env, 'MIGRATIONS_DIR', 'prisma/migrations'),
  };
});
export type DatabaseConfig = ConfigOf<typeof databaseConfig>;

function poolerFlag(databaseUrl: string | undefined): boolean {
  if (databaseUrl === undefined) return false;
  const value = new URL(databaseUrl).searchParams.get('pgbouncer');
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  throw new ConfigError(`DATABASE_URL parameter pgbouncer must be true or false, got "${value}"`);
}

/** The connection string without the parameters only the service reads (pg would pass them on). */
export function driverUrl(databaseUrl: string): string {
  const parsed = new URL(databaseUrl);
  if (!parsed.searchParams.has('pgbouncer')) return databaseUrl;
  parsed.searchParams.delete('pgbouncer');
  return parsed.toString();
}
