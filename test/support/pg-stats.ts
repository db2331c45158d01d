import pg from 'pg';
import { waitFor } from './wait-for.js';

/**
 * What a test database's own backends have done, read from PostgreSQL's cumulative statistics:
 * the round trips a test claims the service did (or did not) make, counted by the server.
 *
 * PostgreSQL 15 keeps each backend's counts in that backend until it flushes them (at most once
 * a second while busy, and always when it exits), so counts are read only once every backend of
 * the database has gone: a backend flushes before it leaves pg_stat_activity (its stats
 * shutdown hook runs before it gives up its slot), so waiting for that is waiting for the flush.
 * The reads go through the server's `postgres` database, whose own backend is not counted.
 */
export interface DatabaseStats {
  /** Transactions committed in the database: every statement outside BEGIN is one. */
  xactCommit: number;
  xactRollback: number;
  /** Sequential plus index scans of each table (public schema), by table name. */
  scans: Record<string, number>;
  /** Scans of each index (public schema), by index name. */
  indexScans: Record<string, number>;
}

function adminUrl(url: string): string {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  return admin.toString();
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Waits (polling the server, up to `timeoutMs`) until no backend is connected to the database. */
export async function waitForNoBackends(databaseUrl: string, timeoutMs = 20_000): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  await withClient(adminUrl(databaseUrl), (admin) =>
    waitFor(
      async () => {
        const { rows } = await admin.query<{ n: string }>(
          'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
          [name],
        );
        return Number(rows[0].n) === 0;
      },
      { what: `the backends connected to ${name} to go`, timeoutMs, intervalMs: 50 },
    ),
  );
}

/**
 * The database's statistics once every backend of it has gone (see above). Table scans need a
 * connection to the database itself; it is opened after the transaction counts were read and
 * scans no table of the public schema, but its one query is a transaction that later calls count.
 */
export async function settledStats(databaseUrl: string): Promise<DatabaseStats> {
  await waitForNoBackends(databaseUrl);
  const name = new URL(databaseUrl).pathname.slice(1);
  const xacts = await withClient(adminUrl(databaseUrl), async (admin) => {
    await admin.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await admin.query<{ c: string; r: string }>(
      'SELECT xact_commit AS c, xact_rollback AS r FROM pg_stat_database WHERE datname = $1',
      [name],
    );
    return { xactCommit: Number(rows[0].c), xactRollback: Number(rows[0].r) };
  });
  const scans = await withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ relname: string; n: string }>(
      `SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS n FROM pg_stat_user_tables WHERE schemaname = 'public'`,
    );
    return Object.fromEntries(rows.map((r) => [r.relname, Number(r.n)]));
  });
  const indexScans = await withClient(databaseUrl, async (c) => {
    const { rows } = await c.query<{ indexrelname: string; n: string }>(
      `SELECT indexrelname, coalesce(idx_scan, 0) AS n FROM pg_stat_user_indexes WHERE schemaname = 'public'`,
    );
    return Object.fromEntries(rows.map((r) => [r.indexrelname, Number(r.n)]));
  });
  return { ...xacts, scans, indexScans };
}
