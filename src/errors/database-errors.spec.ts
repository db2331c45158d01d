import { Prisma } from '../generated/prisma/client.js';
import { isDatabaseUnavailable } from './database-errors.js';

const known = (message: string, code: string, meta?: Record<string, unknown>) =>
  new Prisma.PrismaClientKnownRequestError(message, { code, clientVersion: 'test', meta });

/** A pg DatabaseError as the driver raises it. */
const pgError = (message: string, code: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });

/** What @prisma/adapter-pg throws: a DriverAdapterError with the mapped kind as cause. */
const adapterError = (cause: Record<string, unknown>) =>
  Object.assign(new Error(String(cause.kind)), { name: 'DriverAdapterError', cause });

describe('isDatabaseUnavailable', () => {
  it.each<[string, unknown]>([
    [
      'pg: terminated by an administrator (57P01)',
      pgError('terminating connection due to administrator command', '57P01'),
    ],
    ['pg: socket closed mid-query', new Error('Connection terminated unexpectedly')],
    ['pg: a client whose connection died', new Error('Client has encountered a connection error and is not queryable')],
    ['pg: connect timeout', new Error('timeout exceeded when trying to connect')],
    ['pg: client-side query_timeout', new Error('Query read timeout')],
    ['pg: statement_timeout (57014)', pgError('canceling statement due to statement timeout', '57014')],
    ['node: refused', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['adapter: ConnectionClosed', adapterError({ kind: 'ConnectionClosed' })],
    [
      'adapter: postgres 57P01',
      adapterError({ kind: 'postgres', originalCode: '57P01', originalMessage: 'terminating connection' }),
    ],
    ['Prisma P1017 (server closed the connection)', known('Server has closed the connection.', 'P1017')],
    ['Prisma P2028 (transaction timed out)', known('Transaction API error: Transaction already closed', 'P2028')],
    ['Prisma P2024 (pool timeout)', known('Timed out fetching a new connection from the connection pool', 'P2024')],
    [
      'raw query: ConnectionClosed in meta',
      known('Raw query failed. Code: `N/A`. Message: `Server has closed the connection.`', 'P2010', {
        driverAdapterError: adapterError({ kind: 'ConnectionClosed' }),
      }),
    ],
    [
      'raw query: 57P01 in meta',
      known('Raw query failed. Code: `57P01`. Message: `x`', 'P2010', {
        driverAdapterError: adapterError({ kind: 'postgres', originalCode: '57P01' }),
      }),
    ],
    ['PGlite closed', new Error('PGlite is closed')],
  ])('recognises %s', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each<[string, unknown]>([
    ['a unique violation', known('Unique constraint failed on the fields: (`id`)', 'P2002')],
    ['a syntax error', pgError('syntax error at or near "SELEC"', '42601')],
    [
      'a raw query on a missing table',
      known('Raw query failed. Code: `42P01`. Message: `relation "x" does not exist`', 'P2010', {
        driverAdapterError: adapterError({ kind: 'postgres', originalCode: '42P01' }),
      }),
    ],
    ['a programming error', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
  ])('does not mistake %s for an outage', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });

  it('follows cycles without looping', () => {
    const a: { cause?: unknown } & Error = new Error('a');
    const b: { cause?: unknown } & Error = new Error('b');
    a.cause = b;
    b.cause = a;
    expect(isDatabaseUnavailable(a)).toBe(false);
  });
});
