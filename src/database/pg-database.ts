import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { DatabaseConfig } from '../config/database.config.js';
import type { Database, PreparedRead } from './database.js';
import { migrate, MigrationResult } from './migrator.js';
import { poolConfig, QueryWatch, queryLimitMs, resilientPool, withPoolClient } from './pool.js';
import { pgClientRunner } from './sql-runner.js';

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

/** PostgreSQL at DATABASE_URL, through a pool (Prisma and the hot path's reads) and a health pool. */
export function openPostgres(config: DatabaseConfig): Database {
  const settings = poolConfig(config);
  const watch = new QueryWatch(queryLimitMs(config));
  const pool = resilientPool(settings, watch);
  // A separate small pool for health checks keeps readiness honest when the main pool is busy.
  const healthPool = resilientPool({ ...settings, max: 1 }, watch);
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
    withRunner: (fn) => withPoolClient(healthPool, (client) => fn(pgClientRunner(client))),
    async close() {
      await Promise.all([pool, healthPool].filter((p) => !p.ending).map((p) => p.end()));
      watch.stop();
    },
  };
}

/** Applies migrations to DATABASE_URL on one dedicated connection (the migrate command). */
export async function migratePostgres(config: DatabaseConfig, log: (msg: string) => void): Promise<MigrationResult> {
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
