import { once } from 'node:events';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { interceptedClient, type QueryCallback } from './pg-client-query.js';

/**
 * Canary for pg-client-query.ts: a pg pool whose `Client` replaces `query`, against a server that
 * speaks just enough of PostgreSQL's protocol to connect and answer simple queries. A failure
 * here means a pg, pg-pool or @prisma/adapter-pg upgrade sends queries another way: the pool's
 * client-side bound on queries (database/pool.ts, QueryWatch) and the query spans would silently
 * stop applying.
 */
function internal(ok: boolean, what: string): void {
  if (!ok)
    throw new Error(
      `pg internal changed: ${what}. Re-check src/library-internals/pg-client-query.ts and database/pool.ts (QueryWatch).`,
    );
}

/** Messages of PostgreSQL's protocol: a type byte, then the length of the rest and the rest. */
function message(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const READY = message('Z', Buffer.from('I'));

/** An error response: severity, SQLSTATE, message. */
const FAILED = message('E', Buffer.from('SERROR\0CXX000\0Mfake server\0\0'));

/**
 * Accepts any startup, then answers every simple query with an empty result and every extended
 * query (at its Sync) with an error.
 */
function fakePostgres(): Server {
  return createServer((socket: Socket) => {
    let buffered = Buffer.alloc(0);
    let started = false;
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!started) {
          if (buffered.length < 4 || buffered.length < buffered.readInt32BE(0)) return;
          buffered = buffered.subarray(buffered.readInt32BE(0));
          started = true;
          socket.write(Buffer.concat([message('R', int32(0)), READY]));
          continue;
        }
        if (buffered.length < 5 || buffered.length < 1 + buffered.readInt32BE(1)) return;
        const type = String.fromCharCode(buffered[0]);
        buffered = buffered.subarray(1 + buffered.readInt32BE(1));
        if (type === 'X') socket.end();
        else if (type === 'Q') socket.write(Buffer.concat([message('C', Buffer.from('SELECT 0\0')), READY]));
        else if (type === 'S') socket.write(Buffer.concat([FAILED, READY]));
      }
    });
  });
}

describe('pg internal: every query of a pool goes through Client#query', () => {
  let server: Server;
  let pool: pg.Pool | undefined;
  const seen: unknown[] = [];
  /** The hook under test: records each query and, while `early` is set, fails it at once. */
  let early: Error | undefined;
  const around = (config: unknown, answer: QueryCallback): QueryCallback => {
    seen.push(typeof config === 'string' ? config : (config as { text?: string }).text);
    if (early) answer(early);
    let answered = early !== undefined;
    return (err, result) => {
      if (answered) return;
      answered = true;
      answer(err, result);
    };
  };

  beforeEach(async () => {
    seen.length = 0;
    early = undefined;
    server = fakePostgres();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    pool = new pg.Pool({
      host: '127.0.0.1',
      port,
      user: 'canary',
      database: 'canary',
      max: 1,
      Client: interceptedClient(around),
    });
    pool.on('error', () => {});
  });
  afterEach(async () => {
    await pool?.end().catch(() => {});
    server.close();
  });

  it("pool.query, a client's query with a callback, and its promise all pass through the hook", async () => {
    const db = pool as pg.Pool;
    const result = await db.query('SELECT 1');
    internal(result.command === 'SELECT', 'pool.query does not answer through the hook');
    const client = await db.connect();
    try {
      const viaCallback = await new Promise<pg.QueryResult>((resolve, reject) =>
        client.query('SELECT 2', (err: Error | null, res: pg.QueryResult) => (err ? reject(err) : resolve(res))),
      );
      internal(viaCallback.command === 'SELECT', 'a callback query does not answer through the hook');
      await client.query({ text: 'SELECT 3' });
    } finally {
      client.release();
    }
    internal(
      JSON.stringify(seen) === JSON.stringify(['SELECT 1', 'SELECT 2', 'SELECT 3']),
      `the hook saw ${JSON.stringify(seen)}, not every query sent`,
    );
  });

  it("the hook decides the answer: a query it fails first gets the hook's error, not the server's answer", async () => {
    early = new Error('Query read timeout');
    const failed = await (pool as pg.Pool).query('SELECT 4').then(
      () => null,
      (err: Error) => err,
    );
    internal(failed?.message === 'Query read timeout', "a promise query's answer is not the hook's");
    const client = await (pool as pg.Pool).connect();
    try {
      const viaCallback = await new Promise<Error | null>((resolve) =>
        client.query('SELECT 5', (err: Error | null) => resolve(err)),
      );
      internal(viaCallback?.message === 'Query read timeout', "a callback query's answer is not the hook's");
    } finally {
      client.release(true);
    }
  });

  it("Prisma's adapter sends its queries through the pool's Client#query", async () => {
    early = new Error('Query read timeout');
    const adapter = await new PrismaPg(pool as pg.Pool).connect();
    const failed = await adapter.queryRaw({ sql: 'SELECT 6', args: [], argTypes: [] }).then(
      () => null,
      (err: unknown) => err,
    );
    internal(seen.includes('SELECT 6'), "@prisma/adapter-pg's query did not pass through Client#query");
    internal(
      /Query read timeout/.test(`${String(failed)} ${JSON.stringify(failed)}`),
      `@prisma/adapter-pg's query did not get the hook's answer: ${String(failed)}`,
    );
  });
});
