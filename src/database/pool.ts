import pg from 'pg';
import { driverUrl, type DatabaseConfig } from '../config/database.config.js';
import { interceptedClient } from '../library-internals/pg-client-query.js';
import { InFlight } from '../lifecycle/in-flight.js';
import { endClientSpan, startClientSpan, tracingOn } from '../tracing/tracing.js';

/** Idle time before TCP keepalive probes a pooled connection: well under common NAT idle timeouts (350 s). */
export const POOL_KEEPALIVE_DELAY_MS = 60_000;

/**
 * The pool settings of DATABASE_URL: size, and bounds on connecting and on every query.
 * Behind a pooler (`pgbouncer=true`) statement_timeout is not a startup parameter, which
 * PgBouncer refuses: the migrate command makes it the role's default in the database instead
 * (pg-database.ts, poolerStatementTimeout).
 */
export function poolConfig(config: DatabaseConfig): pg.PoolConfig {
  return {
    connectionString: driverUrl(config.databaseUrl ?? ''),
    max: config.dbPoolMax,
    connectionTimeoutMillis: config.dbConnectTimeoutMs,
    // The server enforces statement_timeout, but a server that has gone silent (a network
    // partition drops packets, no reset) cannot: the pool's QueryWatch bounds every query on the
    // client side at this plus a second ("Query read timeout", a 503), so no request waits for
    // ever on a connection that will never answer. (Not pg's query_timeout: see QueryWatch.)
    statement_timeout: config.dbPooler ? undefined : config.dbStatementTimeoutMs,
    // A connection, once opened, stays open (no idle timeout): the database is sized for every
    // instance's DB_POOL_MAX anyway, and a pool that closes what a burst opened makes PostgreSQL
    // end a backend for each, then fork one again at the next burst, stalling the other
    // connections' queries meanwhile (docs/performance.md, "Fast paths"). TCP keepalive keeps
    // an idle connection known to whatever sits between (a NAT or firewall forgets a silent one),
    // and finds a peer that vanished; the pool drops a connection that errors while idle.
    idleTimeoutMillis: 0,
    keepAlive: true,
    keepAliveInitialDelayMillis: POOL_KEEPALIVE_DELAY_MS,
  };
}

/** The client-side bound of a query of this configuration: statement_timeout plus a second. */
export function queryLimitMs(config: DatabaseConfig): number {
  return config.dbStatementTimeoutMs + 1000;
}

/** How often a pool's queries are checked against their bound. */
const QUERY_SWEEP_MS = 250;

interface WatchedQuery {
  startedAt: number;
  settled: boolean;
  fail: (err: Error) => void;
}

/**
 * The client-side bound on the queries of one pool: each query is recorded when it is sent,
 * and one interval timer per pool fails those older than the bound with pg's own error
 * ("Query read timeout"); the caller then releases the connection as broken.
 *
 * Not pg's `query_timeout`, which does the same with a timer per query: that timer keeps each
 * request's objects alive while it waits, which costs GC time under load (bench scenario
 * createPet, its GC column). The price of one timer per pool: a failure is reported between the
 * bound and the bound plus QUERY_SWEEP_MS.
 */
export class QueryWatch {
  private readonly queries = new InFlight<WatchedQuery>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly limitMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.timer = setInterval(() => this.sweep(), Math.min(QUERY_SWEEP_MS, limitMs));
    this.timer.unref();
  }

  /** Queries sent and not yet answered. */
  get pending(): number {
    return this.queries.size;
  }

  /** Records a query; `fail` is called at most once, if the bound passes first. */
  start(fail: (err: Error) => void): WatchedQuery {
    const query: WatchedQuery = { startedAt: this.now(), settled: false, fail };
    this.queries.add(query);
    return query;
  }

  /** Whether the query was still waiting (false: the bound had failed it already). */
  settle(query: WatchedQuery): boolean {
    if (query.settled) return false;
    query.settled = true;
    this.queries.delete(query);
    return true;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Fails the queries past the bound (every QUERY_SWEEP_MS; public for tests). */
  sweep(): void {
    if (this.queries.size === 0) return;
    const now = this.now();
    for (const query of this.queries.values()) {
      if (now - query.startedAt > this.limitMs && this.settle(query)) query.fail(new Error('Query read timeout'));
    }
  }
}

/**
 * pg's Client with every query bounded by `watch` and traced (a span per query while tracing is
 * on), through the fenced interceptedClient (library-internals/pg-client-query.ts).
 */
function watchedClient(watch: QueryWatch): typeof pg.Client {
  return interceptedClient((config, answer) => {
    const span = querySpan(config);
    const watched = watch.start((err) => {
      if (span) endClientSpan(span, err);
      answer(err);
    });
    return (err, result) => {
      if (!watch.settle(watched)) return;
      if (span) endClientSpan(span, err);
      answer(err, result);
    };
  });
}

/**
 * The trace span of a query, under the request being served (undefined while tracing is off):
 * named for its operation, with its parameterised text (never the values).
 */
function querySpan(config: unknown) {
  if (!tracingOn()) return undefined;
  const text =
    typeof config === 'string' ? config : ((config as { text?: unknown } | null)?.text as string | undefined);
  if (typeof text !== 'string') return undefined;
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  return startClientSpan(operation, {
    'db.system.name': 'postgresql',
    'db.operation.name': operation,
    'db.query.text': text,
  });
}

/**
 * A pg pool (its queries bounded by `watch`, when given) whose connections can die at any moment without taking the process with them.
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
export function resilientPool(config: pg.PoolConfig, watch?: QueryWatch): pg.Pool {
  const pool = new pg.Pool(watch === undefined ? config : { ...config, Client: watchedClient(watch) });
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
