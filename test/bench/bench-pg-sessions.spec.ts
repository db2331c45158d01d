// bench/pg-sessions.mjs, the fixed-rate table's count of PostgreSQL connections opened and closed
// during a run, against the real PostgreSQL of DATABASE_URL.
import pg from 'pg';
import { SessionCounter, sessionsSince } from '../../bench/pg-sessions.mjs';
import { describeIfPostgres } from '../support/databases.js';
import { waitFor } from '../support/wait-for.js';

describe('sessionsSince', () => {
  it('counts the connections opened, and those closed as the opened less the growth in open ones', () => {
    expect(sessionsSince({ opened: 100, open: 12 }, { opened: 105, open: 14 })).toEqual({ opened: 5, closed: 3 });
    expect(sessionsSince({ opened: 100, open: 12 }, { opened: 100, open: 12 })).toEqual({ opened: 0, closed: 0 });
    expect(sessionsSince(null, { opened: 1, open: 1 })).toBeNull();
    expect(sessionsSince({ opened: 1, open: 1 }, null)).toBeNull();
  });
});

describeIfPostgres('SessionCounter', () => {
  const url = process.env.DATABASE_URL as string;
  let counter: SessionCounter;
  beforeAll(async () => {
    counter = new SessionCounter(url);
    expect(await counter.start()).toBe(true);
  });
  afterAll(() => counter.close());

  it('sees connections opened and then closed between two readings', async () => {
    const before = await counter.read();
    const clients = Array.from({ length: 3 }, () => new pg.Client({ connectionString: url }));
    for (const client of clients) {
      await client.connect();
      await client.query('SELECT 1');
    }
    const opened = sessionsSince(before, await counter.read());
    for (const client of clients) await client.end();
    // Other suites may connect meanwhile: at least this test's three are counted.
    expect(opened?.opened).toBeGreaterThanOrEqual(3);
    // A backend ends after its client's socket has closed.
    const after = await waitFor(
      async () => {
        const since = sessionsSince(before, await counter.read());
        return since !== null && since.closed >= 3 ? since : undefined;
      },
      { what: 'the three backends to end' },
    );
    expect(after.opened).toBeGreaterThanOrEqual(3);
    expect(after.closed).toBeGreaterThanOrEqual(3);
  });

  it('reads nothing once PostgreSQL cannot be reached', async () => {
    const unreachable = new SessionCounter('postgresql://postgres@127.0.0.1:1/postgres');
    expect(await unreachable.start()).toBe(false);
    expect(await unreachable.read()).toBeNull();
    await unreachable.close();
  });
});
