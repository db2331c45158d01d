import { checkDataDir } from './data-dir.js';
import { defineConfig, type ConfigOf } from './define-config.js';
import { int, str, url, type Reader } from './env.js';
import { refusePublicPassword } from './placeholder-passwords.js';
import { runtimeConfig } from './runtime.config.js';

/**
 * The database: PostgreSQL, or the embedded one; its pool, timeouts and migrations. Its
 * start-up check, for the embedded database, makes sure DATA_DIR is a directory this process
 * can write and that no other process holds (data-dir-lock.ts).
 */
export const databaseConfig = defineConfig(
  'database',
  (env, use) => {
    const production = use(runtimeConfig).nodeEnv === 'production';
    const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
    const directUrl = url(env, 'DIRECT_URL', ['postgres:', 'postgresql:']);
    refusePublicPassword(env, 'DATABASE_URL', databaseUrl, production);
    refusePublicPassword(env, 'DIRECT_URL', directUrl, production);
    return {
      /** PostgreSQL connection string; undefined selects the embedded database (PGlite). */
      databaseUrl,
      /**
       * `pgbouncer=true` on DATABASE_URL (Prisma's convention): a pooler in transaction mode sits
       * in front of PostgreSQL, so no named prepared statements and no startup parameters.
       */
      dbPooler: poolerFlag(env, databaseUrl),
      /** PostgreSQL itself, bypassing the pooler, for the migrate command (Prisma's directUrl). */
      directUrl,
      /** Data directory of the embedded database. */
      dataDir: str(env, 'DATA_DIR', './data'),
      dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 1000),
      dbConnectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', 3000, 100, 600_000),
      dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 10_000, 100, 600_000),
      migrationsDir: str(env, 'MIGRATIONS_DIR', 'prisma/migrations'),
    };
  },
  async (database, env) => {
    if (database.databaseUrl !== undefined || !env.ok('DATABASE_URL', 'DATA_DIR')) return;
    const problem = await checkDataDir(database.dataDir);
    if (problem !== undefined) env.problem(problem, 'DATA_DIR');
  },
);
export type DatabaseConfig = ConfigOf<typeof databaseConfig>;

/**
 * What the migrate command adds to the database's settings: the connection it migrates
 * through. Behind a pooler (pgbouncer=true) that must be DIRECT_URL, PostgreSQL itself: the
 * migrator holds a session's advisory lock, which transaction pooling cannot keep.
 */
export const migrationConfig = defineConfig('migration', (env, use) => {
  const { databaseUrl, directUrl, dbPooler } = use(databaseConfig);
  if (dbPooler && directUrl === undefined && env.ok('DATABASE_URL', 'DIRECT_URL')) {
    env.problem(
      'DATABASE_URL has pgbouncer=true: set DIRECT_URL to PostgreSQL itself for the migrate command (a transaction pooler cannot keep its lock)',
      'DIRECT_URL',
    );
  }
  return {
    /** Where migrations are applied: DIRECT_URL, else DATABASE_URL; undefined: the embedded database. */
    migrateUrl: directUrl ?? databaseUrl,
  };
});

function poolerFlag(env: Reader, databaseUrl: string | undefined): boolean {
  if (databaseUrl === undefined) return false;
  const value = new URL(databaseUrl).searchParams.get('pgbouncer');
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  env.problem(`DATABASE_URL parameter pgbouncer must be true or false, got "${value.slice(0, 100)}"`, 'DATABASE_URL');
  return false;
}

/** Host, port and database of a connection string, for messages: never its user or password. */
export function describeDatabaseUrl(raw: string): string {
  const url = new URL(raw);
  return `${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
}

/** The connection string without the parameters only the service reads (pg would pass them on). */
export function driverUrl(databaseUrl: string): string {
  const parsed = new URL(databaseUrl);
  if (!parsed.searchParams.has('pgbouncer')) return databaseUrl;
  parsed.searchParams.delete('pgbouncer');
  return parsed.toString();
}
