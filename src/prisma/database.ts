import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { AppConfig } from '../config/config.js';
import { acquireDataDirLock, DataDirLock } from './data-dir-lock.js';
import { migrate } from './migrator.js';
import { pgClientRunner, pgliteRunner, SqlRunner } from './sql-runner.js';
import type { PrismaClient } from '../generated/prisma/client.js';

type DriverAdapter = NonNullable<ConstructorParameters<typeof PrismaClient>[0]['adapter']>;

/**
 * Opens the database the configuration selects: PostgreSQL at DATABASE_URL, or the embedded
 * PGlite in DATA_DIR (locked for this process and migrated on open).
 */
export interface Database {
  kind: 'postgres' | 'embedded';
  adapter: DriverAdapter;
  /** Runs raw SQL outside Prisma (health checks). */
  withRunner<T>(fn: (db: SqlRunner) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function openEmbedded(config: AppConfig, log: (msg: string) => void, purpose?: string): Promise<Database> {
  const lock: DataDirLock = acquireDataDirLock(config.dataDir, purpose);
  let db: PGlite;
  try {
    db = await PGlite.create(config.dataDir);
    await migrate(pgliteRunner(db), config.migrationsDir, log);
  } catch (err) {
    lock.release();
    throw err;
  }
  return {
    kind: 'embedded',
    adapter: new PrismaPGlite(db),
    withRunner: (fn) => fn(pgliteRunner(db)),
    async close() {
      try {
        if (!db.closed) await db.close();
      } finally {
        lock.release();
      }
    },
  };
}

export function openPostgres(config: AppConfig): Database {
  const poolConfig: pg.PoolConfig = {
    connectionString: config.databaseUrl,
    max: config.dbPoolMax,
    connectionTimeoutMillis: config.dbConnectTimeoutMs,
    statement_timeout: config.dbStatementTimeoutMs,
    idleTimeoutMillis: 30_000,
  };
  // A separate small pool for health checks keeps readiness honest when the main pool is busy.
  const healthPool = new pg.Pool({ ...poolConfig, max: 1 });
  healthPool.on('error', () => {}); // idle client errors (server restart) are not fatal
  return {
    kind: 'postgres',
    adapter: new PrismaPg(poolConfig, {
      onPoolError: () => {},
      onConnectionError: () => {},
    }),
    async withRunner(fn) {
      const client = await healthPool.connect();
      try {
        return await fn(pgClientRunner(client));
      } finally {
        client.release();
      }
    },
    close: () => healthPool.end(),
  };
}

/** Applies migrations to DATABASE_URL on one dedicated connection (the migrate command). */
export async function migratePostgres(config: AppConfig, log: (msg: string) => void) {
  const client = new pg.Client({
    connectionString: config.databaseUrl,
    connectionTimeoutMillis: config.dbConnectTimeoutMs,
  });
  await client.connect();
  try {
    return await migrate(pgClientRunner(client), config.migrationsDir, log);
  } finally {
    await client.end();
  }
}
