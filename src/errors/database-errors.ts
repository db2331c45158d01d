/** Seconds a client should wait before retrying while the database is unreachable. */
export const DB_RETRY_AFTER_SECONDS = 5;

/**
 * Recognises "the database is unreachable right now" among the errors Prisma, its driver
 * adapters and pg raise, so the filter can answer 503 (retryable) rather than 500.
 */

// Prisma: can't reach server, timed out, server closed the connection, pool timeout, too many
// connections (P2037), and the interactive transaction API's error (P2028: a transaction could
// not start within maxWait, or outlived its timeout because the database stopped answering).
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2037']);
// Node socket errors while connecting or mid-query.
const NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);
// PostgreSQL SQLSTATEs: connection exceptions (08xxx), shutdown/crash (57P01-57P03),
// too many connections (53300), and the cannot-connect-now of a starting server; 57014
// query_canceled is statement_timeout (the service never cancels a query otherwise): an
// overloaded database, worth a retry.
const SQLSTATE = /^(08...|57P0[123]|57014|53300)$/;
// Driver adapter error kinds (@prisma/driver-adapter-utils) that mean "no usable connection".
const KINDS = /^(DatabaseNotReachable|SocketTimeout|ConnectionClosed|TooManyConnections)$/;
const MESSAGES = [
  /connection terminated/i,
  /connection (refused|reset|timeout)/i,
  /timeout exceeded when trying to connect/i,
  /can't reach database server/i,
  /server (has )?closed the connection/i,
  /terminating connection due to administrator command/i,
  /Client has encountered a connection error/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /PGlite is closed/i,
  // The client-side bound on queries (QueryWatch, src/database/pool.ts), in pg's own words: the
  // server stopped answering.
  /query read timeout/i,
];

export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const cur = queue.shift();
    if (!cur || typeof cur !== 'object' || seen.has(cur)) continue;
    seen.add(cur);
    const e = cur as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      name?: unknown;
      originalCode?: unknown;
      kind?: unknown;
      meta?: { driverAdapterError?: unknown };
    };
    const code = typeof e.code === 'string' ? e.code : typeof e.originalCode === 'string' ? e.originalCode : '';
    if (PRISMA_CODES.has(code) || NODE_CODES.has(code) || SQLSTATE.test(code)) return true;
    if (e.name === 'PrismaClientInitializationError') return true;
    if (typeof e.kind === 'string' && KINDS.test(e.kind)) return true;
    if (typeof e.message === 'string' && MESSAGES.some((re) => re.test(e.message as string))) return true;
    // Raw queries ($queryRaw…) fail as P2010 "Raw query failed" whatever the cause, with the
    // driver adapter's error (its kind, SQLSTATE) in meta rather than in cause.
    queue.push(e.cause, e.meta?.driverAdapterError);
  }
  return false;
}
