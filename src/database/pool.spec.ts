import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { DatabaseConfig } from '../config/database.config.js';
import { POOL_KEEPALIVE_DELAY_MS, QueryWatch, poolConfig } from './pool.js';

/** A connection that connects at once and counts how often the pool ends it. */
class StubClient extends EventEmitter {
  static ended = 0;
  readonly _queryable = true;
  connect(callback: (err?: Error) => void): void {
    callback();
  }
  end(callback?: () => void): void {
    StubClient.ended++;
    this.emit('end');
    callback?.();
  }
}

const CONFIG: DatabaseConfig = {
  databaseUrl: 'postgresql://app@db.example:5432/animal_store',
  dbPooler: false,
  directUrl: undefined,
  dataDir: './data',
  dbPoolMax: 10,
  dbConnectTimeoutMs: 3_000,
  dbStatementTimeoutMs: 10_000,
  migrationsDir: 'prisma/migrations',
};

describe('poolConfig', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps every connection a burst opened, however long it then idles', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    StubClient.ended = 0;
    const pool = new pg.Pool({ ...poolConfig(CONFIG), Client: StubClient as unknown as typeof pg.Client });
    const burst = await Promise.all(Array.from({ length: 6 }, () => pool.connect()));
    for (const client of burst) client.release();
    expect(pool.idleCount).toBe(6);
    jest.advanceTimersByTime(24 * 60 * 60 * 1000);
    expect(StubClient.ended).toBe(0);
    expect(pool.totalCount).toBe(6);
    await pool.end();
    expect(StubClient.ended).toBe(6);
  });

  it('asks for TCP keepalive on every connection, before common NAT idle timeouts', () => {
    expect(poolConfig(CONFIG)).toMatchObject({ keepAlive: true, keepAliveInitialDelayMillis: POOL_KEEPALIVE_DELAY_MS });
    expect(POOL_KEEPALIVE_DELAY_MS).toBeLessThan(350_000);
  });
});

describe('QueryWatch', () => {
  let now = 0;
  let watch: QueryWatch;
  beforeEach(() => {
    now = 1_000;
    watch = new QueryWatch(2_000, () => now);
  });
  afterEach(() => watch.stop());

  it("fails a query once the bound has passed, with pg's own message, and only once", () => {
    const failures: Error[] = [];
    const slow = watch.start((err) => failures.push(err));
    const quick = watch.start(() => failures.push(new Error('quick was failed')));
    expect(watch.pending).toBe(2);
    now += 500;
    expect(watch.settle(quick)).toBe(true); // answered in time
    now += 1_500; // exactly at the bound: not past it
    watch.sweep();
    expect(failures).toEqual([]);
    now += 1;
    watch.sweep();
    watch.sweep();
    expect(failures.map((e) => e.message)).toEqual(['Query read timeout']);
    expect(watch.pending).toBe(0);
    // The answer that arrives after the bound is dropped: the caller has its error already.
    expect(watch.settle(slow)).toBe(false);
  });

  it('never fails a query that was answered', () => {
    const failed = jest.fn();
    const query = watch.start(failed);
    expect(watch.settle(query)).toBe(true);
    expect(watch.settle(query)).toBe(false);
    now += 10_000;
    watch.sweep();
    expect(failed).not.toHaveBeenCalled();
  });
});
