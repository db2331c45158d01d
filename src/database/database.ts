import type { SqlRunner } from './sql-runner.js';
import type { PrismaClient } from '../generated/prisma/client.js';

type DriverAdapter = NonNullable<ConstructorParameters<typeof PrismaClient>[0]['adapter']>;

/**
 * The database the configuration selects (openDatabase(), open-database.ts): PostgreSQL at
 * DATABASE_URL (pg-database.ts), or the embedded PGlite in DATA_DIR, locked for this process and
 * migrated on open (embedded-database.ts). The rest of the service sees only this.
 */
export interface Database {
  kind: 'postgres' | 'embedded';
  adapter: DriverAdapter;
  /** Runs raw SQL outside Prisma (health checks). */
  withRunner<T>(fn: (db: SqlRunner) => Promise<T>): Promise<T>;
  /**
   * Runs one statement of our own SQL (a read, or a write with RETURNING) outside Prisma's
   * query builder, on the same connections: on PostgreSQL as a named prepared statement (parsed
   * and planned once per connection, not per request), on PGlite as is. Returns its rows; int8
   * columns come back as bigint.
   */
  query<T>(statement: PreparedStatement, params: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** A statement with a name unique in the process (its prepared-statement name). */
export interface PreparedStatement {
  name: string;
  text: string;
}
