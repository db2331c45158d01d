import pg from 'pg';
import type { DatabaseConfig } from '../config/database.config.js';

/** The pool settings of DATABASE_URL: size, and bounds on connecting and on every query. */
export function poolConfig(config: DatabaseConfig): pg.PoolConfig {
  return {
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
export function resilientPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', () => {}); // an idle client died: the pool has already removed it
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * Runs fn on a client of the pool. A client whose connection died, or whose query failed or
 * timed out, is discarded on release rather than pooled: it may be mid-query or gone.
 */
export async function withPoolClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on('error', onError);
  try {
    return await fn(client);
  } catch (err) {
    broken ??= err as Error;
    throw err;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}
