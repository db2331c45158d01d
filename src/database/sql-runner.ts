import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/**
 * The few SQL calls the migrator and health checks need, over either a pg connection or
 * an embedded PGlite instance (both speak PostgreSQL; only their client APIs differ).
 */
export interface SqlRunner {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs a script of several statements (simple query protocol). */
  exec(sql: string): Promise<void>;
}

export function pgliteRunner(db: PGlite): SqlRunner {
  return {
    async query<T>(sql: string, params: unknown[] = []) {
      return (await db.query<T>(sql, params)).rows;
    },
    async exec(sql: string) {
      await db.exec(sql);
    },
  };
}

export function pgClientRunner(client: pg.Client | pg.PoolClient): SqlRunner {
  return {
    async query<T>(sql: string, params: unknown[] = []) {
      return (await client.query(sql, params)).rows as T[];
    },
    async exec(sql: string) {
      await client.query(sql);
    },
  };
}
