import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { driverUrl, type DatabaseConfig } from '../config/database.config.js';
import type { Database, PreparedStatement } from './database.js';
import { migrate, MigrationResult } from './migrator.js';
import { poolConfig, QueryWatch, queryLimitMs, resilientPool, withPoolClient } from './pool.js';
import { pgClientRunner } from './sql-runner.js';

/**
 * pg parses int8 (oid 20) as a string by default. The service's ids are int64: a value a
 * double holds exactly stays a number, anything larger becomes a bigint, so every id is
 * exact and the JSON writer writes both as the same digits. (Not a bigint for every value:
 * that costs two BigInt conversions per row of every page; bench scenario listPets.)
 */
export function parseInt8(text: string): number | bigint {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

const INT8_RESULTS: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? parseInt8
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * The queries of prepared statements, named or not: each an object whose only own property is
 * `values`, over one prototype per statement that holds its name, text and types. pg copies each
 * query's config before reading it (its own properties, descriptor by descriptor, onto an object
 * of the same prototype), so the copy is of one property rather than four (bench scenario listPets).
 */
export function statementQueries(named: boolean) {
  const prototypes = new WeakMap<PreparedStatement, pg.QueryConfig>();
  return (statement: PreparedStatement, params: readonly unknown[]): pg.QueryConfig => {
    let proto = prototypes.get(statement);
    if (proto === undefined) {
      proto = { name: named ? statement.name : undefined, text: statement.text, types: INT8_RESULTS };
      prototypes.set(statement, proto);
    }
    const config = Object.create(proto) as pg.QueryConfig;
    config.values = params as unknown[];
    return config;
  };
}

/** PostgreSQL at DATABASE_URL, through a pool (Prisma and the hot path's reads) and a health pool. */
export function openPostgres(config: DatabaseConfig): Database {
  const settings = poolConfig(config);
  const watch = new QueryWatch(queryLimitMs(config));
  const pool = resilientPool(settings, watch);
  // A separate small pool for health checks keeps readiness honest when the main pool is busy.
  const healthPool = resilientPool({ ...settings, max: 1 }, watch);
  // A pooler in transaction mode hands each statement any server connection, where a named
  // statement may be missing or already exist: there the reads go unnamed, as Prisma's are.
  const queryOf = statementQueries(!config.dbPooler);
  return {
    kind: 'postgres',
    adapter: new PrismaPg(pool, {
      onPoolError: () => {},
      onConnectionError: () => {},
    }),
    query: async <T>(statement: PreparedStatement, params: readonly unknown[]) =>
      (await pool.query<T & pg.QueryResultRow>(queryOf(statement, params))).rows,
    withRunner: (fn) => withPoolClient(healthPool, (client) => fn(pgClientRunner(client))),
    async close() {
      await Promise.all([pool, healthPool].filter((p) => !p.ending).map((p) => p.end()));
      watch.stop();
    },
  };
}

/**
 * Applies migrations on one dedicated connection (the migrate command): to DIRECT_URL when set,
 * else DATABASE_URL. Behind a pooler DIRECT_URL is required (the migrator holds a session's
 * advisory lock, which transaction pooling cannot keep), and the statement timeout is set as
 * the pooled role's default in the database.
 */
export async function migratePostgres(config: DatabaseConfig, log: (msg: string) => void): Promise<MigrationResult> {
  if (config.dbPooler && !config.directUrl) {
    throw new Error('DATABASE_URL has pgbouncer=true: set DIRECT_URL to PostgreSQL itself for the migrate command');
  }
  const client = new pg.Client({
    connectionString: driverUrl(config.directUrl ?? config.databaseUrl ?? ''),
    connectionTimeoutMillis: config.dbConnectTimeoutMs,
  });
  await client.connect();
  try {
    const result = await migrate(pgClientRunner(client), config.migrationsDir, log);
    if (config.dbPooler) await poolerStatementTimeout(client, config, log);
    return result;
  } finally {
    await client.end();
  }
}

/**
 * Makes DB_STATEMENT_TIMEOUT_MS the default of DATABASE_URL's role in this database, so that
 * every server connection a pooler opens for the service starts with it (a startup parameter
 * would be refused, and a SET would leak to the pooler's other clients). Scoped to the one
 * database, so the role keeps its settings elsewhere. Connections the pooler already holds keep
 * their old value until it replaces them (server_lifetime).
 */
async function poolerStatementTimeout(
  client: pg.Client,
  config: DatabaseConfig,
  log: (msg: string) => void,
): Promise<void> {
  const user = decodeURIComponent(new URL(config.databaseUrl ?? '').username);
  const role = user === '' ? 'CURRENT_USER' : client.escapeIdentifier(user);
  const { rows } = await client.query<{ db: string }>('SELECT current_database() AS db');
  const timeout = `${config.dbStatementTimeoutMs}ms`;
  await client.query(
    `ALTER ROLE ${role} IN DATABASE ${client.escapeIdentifier(rows[0].db)} SET statement_timeout = ${client.escapeLiteral(timeout)}`,
  );
  log(
    `statement_timeout of ${user || 'the current role'} in ${rows[0].db}: ${timeout} (DATABASE_URL goes through a pooler)`,
  );
}
