/**
 * Recognises "the database is unreachable right now" among the errors Prisma, its driver
 * adapters and pg raise, so the filter can answer 503 (retryable) rather than 500.
 */

// Prisma: can't reach server, timed out, server closed the connection, pool timeout.
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
// Node socket errors while connecting or mid-query.
const NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);
// PostgreSQL SQLSTATEs: connection exceptions (08xxx), shutdown/crash (57P01-57P03),
// too many connections (53300), and the cannot-connect-now of a starting server.
const SQLSTATE = /^(08...|57P0[123]|53300)$/;
const MESSAGES = [
  /connection terminated/i,
  /connection (refused|reset|timeout)/i,
  /timeout exceeded when trying to connect/i,
  /can't reach database server/i,
  /server closed the connection/i,
  /terminating connection due to administrator command/i,
  /Client has encountered a connection error/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /PGlite is closed/i,
];

export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  let cur: unknown = err;
  while (cur && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur);
    const e = cur as { code?: unknown; message?: unknown; cause?: unknown; name?: unknown; originalCode?: unknown; kind?: unknown };
    const code = typeof e.code === 'string' ? e.code : typeof e.originalCode === 'string' ? e.originalCode : '';
    if (PRISMA_CODES.has(code) || NODE_CODES.has(code) || SQLSTATE.test(code)) return true;
    if (e.name === 'PrismaClientInitializationError') return true;
    if (typeof e.kind === 'string' && /^(DatabaseNotReachable|SocketTimeout|ConnectionClosed|TooManyConnections)$/.test(e.kind)) return true;
    if (typeof e.message === 'string' && MESSAGES.some((re) => re.test(e.message as string))) return true;
    cur = e.cause;
  }
  return false;
}
