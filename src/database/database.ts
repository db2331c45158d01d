import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { DatabaseConfig } from '../config/database.config.js';
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
  /**
   * Runs one of the hot path's reads outside Prisma, on the same connections: on PostgreSQL as
   * a named prepared statement (parsed and planned once per connection, not per request), on
   * PGlite as is. int8 columns come back as bigint.
   */
  read<T>(statement: PreparedRead, params: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** A read statement with a name unique in the process (its prepared-statement name). */
export interface PreparedRead {
  name: string;
  text: string;
}

/**
 * pg parses int8 (oid 20) as a string by default. The service's ids are int64: a value a
 * double holds exactly stays a number, anything larger becomes a bigint, so every id is
 * exact and the JSON writer writes both as the same digits. (A bigint for every value cost
 * two BigInt conversions per row, ~40 µs per page of 20 in the bench's profile.)
 */
export function parseInt8(text: string): number | bigint {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

const INT8_RESULTS: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? parseInt8 : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export async function openEmbedded(config: DatabaseConfig, log: (msg: string) => void, purpose?: string): Promise<Database> {
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
    // PGlite returns int8 as bigint already.
    read: async <T>(statement: PreparedRead, params: readonly unknown[]) =>
      (await db.query<T>(statement.text, params as unknown[])).rows,
    async close() {
      try {
        if (!db.closed) await db.close();
      } finally {
        lock.release();
      }
    },
  };
}

export function openPostgres(config: DatabaseConfig): Database {
  const poolConfig: pg.PoolConfig = {
    connectionString: config.databaseUrl,
    max: config.dbPoolMax,
    connectionTimeoutMillis: config.dbConnectTimeoutMs,
    statement_timeout: config.dbStatementTimeoutMs,
    // The server enforces statement_timeout, but a server that has gone silent (a network
    // partition drops packets, no reset) cannot: this client-side bound keeps a request from
    // waiting for ever on a connection that will never answer ("Query read timeout", a 503).
    query_timeout: config.dbStatementTimeoutMs + 1000,
    idleTimeoutMillis: 30_000,
  };
  const pool = resilientPool(poolConfig);
  // A separate small pool for health checks keeps readiness honest when the main pool is busy.
  const healthPool = resilientPool({ ...poolConfig, max: 1 });
  return {
    kind: 'postgres',
    adapter: new PrismaPg(pool, {
      onPoolError: () => {},
      onConnectionError: () => {},
    }),
    read: async <T>(statement: PreparedRead, params: readonly unknown[]) =>
      (
        await pool.query<T & pg.QueryResultRow>({
          name: statement.name,
          text: statement.text,
          values: params as unknown[],
          types: INT8_RESULTS,
        })
      ).rows,
    async withRunner(fn) {
      const client = await healthPool.connect();
      let broken: Error | undefined;
      const onError = (err: Error) => (broken = err);
      client.on('error', onError);
      try {
        return await fn(pgClientRunner(client));
      } catch (err) {
        broken ??= err as Error;
        throw err;
      } finally {
        client.removeListener('error', onError);
        // A client whose connection died, or whose query timed out, is discarded, not pooled.
        client.release(broken);
      }
    },
    async close() {
      await Promise.all([pool, healthPool].filter((p) => !p.ending).map((p) => p.end()));
    },
  };
}

/**
 * A pg pool whose connections can die at any moment without taking the process with them.
 *
 * A pg client emits 'error' when its connection dies outside a query (pg_terminate_backend, a
 * server restart, a network cut). pg-pool listens while the client is idle in the pool, and
 * @prisma/adapter-pg while it holds one for a transaction, but not in between: a connection
 * terminated right after it was established (the FATAL arrives in the same read as
 * ReadyForQuery, before the borrower had a chance to listen) or while the health check holds
 * it would emit an unheard 'error', which Node turns into an uncaught exception. So every
 * client gets a listener of its own for life. The failure still reaches whoever uses the
 * client: its next query fails ("not queryable", a 503), and the pool discards it on release.
 */
function resilientPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', () => {}); // an idle client died: the pool has already removed it
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Applies migrations to DATABASE_URL on one dedicated connection (the migrate command). */
export async function migratePostgres(config: DatabaseConfig, log: (msg: string) => void) {
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
