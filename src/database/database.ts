import type { DatabaseConfig } from '../config/database.config.js';
import type { SqlRunner } from './sql-runner.js';
import type { PrismaClient } from '../generated/prisma/client.js';

type DriverAdapter = NonNullable<ConstructorParameters<typeof PrismaClient>[0]['adapter']>;

/**
 * The database the configuration selects: PostgreSQL at DATABASE_URL (pg-database.ts), or the
 * embedded PGlite in DATA_DIR, locked for this process and migrated on open
 * (embedded-database.ts). The rest of the service sees only this.
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

/**
 * Opens the database the configuration selects. `log` receives the embedded database's
 * migration notes; `purpose` names the holder in DATA_DIR's lock (shown to whoever it refuses).
 */
export async function openDatabase(
  config: DatabaseConfig,
  log: (msg: string) => void,
  purpose: string,
): Promise<Database> {
  // Each driver is loaded only when selected: pg and its Prisma adapter, or PGlite, not both,
  // since loading a driver is part of every start (the bench's start to ready).
  if (config.databaseUrl) return (await import('./pg-database.js')).openPostgres(config);
  return (await import('./embedded-database.js')).openEmbedded(config, log, purpose);
}
