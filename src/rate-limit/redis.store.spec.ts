import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { describeWithRedis, dropRedisKeys, redisPrefix, redisUrl } from '../../test/support/redis-env.js';
import { SystemClock } from '../time/clock.js';
import { MemoryRateLimitStore } from './memory.store.js';
import { ConsumeRequest, ConsumeResult, WindowSpec } from './rate-limit.windows.js';
import { RATE_LIMIT_SCRIPT } from './rate-limit.script.js';
import { windowsOf } from './rate-limiter.js';
import { LEASE_HEADROOM, LEASE_MAX, LONG_LEASE_MS } from './redis-leases.js';
import { waitFor } from '../../test/support/wait-for.js';
import { RedisRateLimitStore } from './redis.store.js';

const REDIS_URL = redisUrl();

const MINUTE = 60_000;
const DAY = 86_400_000;
const T = Date.parse('2026-11-22T12:00:10Z');
const PREFIX = redisPrefix('rl-unit');
const RATE_LIMIT_SCRIPT_SHA = createHash('sha1').update(RATE_LIMIT_SCRIPT).digest('hex');
/** Whether a command sent is the rate-limit script (EVALSHA, or EVAL on a connection that has not run it yet). */
const isScript = ([command]: readonly [{ name: string }, ...unknown[]]) =>
  command.name === 'evalsha' || command.name === 'eval';

const memoryStore = () => new MemoryRateLimitStore(new SystemClock(), 1000);

function newStore(url = REDIS_URL as string, prefix = PREFIX, fallback = memoryStore): RedisRateLimitStore {
  const clock = new SystemClock();
  return new RedisRateLimitStore(clock, fallback, {
    target: { kind: 'single', url },
    prefix,
    commandTimeoutMs: 500,
    connectTimeoutMs: 500,
  });
}

describeWithRedis('RedisRateLimitStore against Redis', () => {
  let store: RedisRateLimitStore;
  let admin: Redis;

  beforeAll(async () => {
    store = newStore();
    await store.onModuleInit();
    admin = new Redis(REDIS_URL as string);
  });

  afterAll(async () => {
    await store.onModuleDestroy();
    admin.disconnect();
    await dropRedisKeys(PREFIX);
  });

  it('decides exactly as the memory store does, request by request (property)', async () => {
    const step = fc.record({
      advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 2 * DAY })),
      subject: fc.constantFrom('key:1', 'key:2', 'ip:::1'),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 15 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(step, { maxLength: 60 }),
        async (perMinute, perDay, threshold, steps) => {
          run += 1;
          const memory = new MemoryRateLimitStore(new SystemClock(), 1000);
          const windows = windowsOf({ perMinute, perDay });
          let now = T;
          for (const { advanceMs, subject } of steps) {
            now += advanceMs;
            const request: ConsumeRequest = {
              subject: `run${run}:${subject}`,
              nowMs: now,
              windows,
              banThreshold: threshold,
              banMs: 90_000,
            };
            expect(await store.consume(request)).toEqual(memory.consumeSync(request));
          }
        },
      ),
      { numRuns: 40 },
    );
    expect(store.shared).toBe(true);
  });

  it("uses one script round trip; an address's keys expire with its windows, its ban a day after them", async () => {
    const request: ConsumeRequest = {
      subject: 'ip:203.0.113.5',
      nowMs: T,
      windows: windowsOf({ perMinute: 1, perDay: 5 }),
      banThreshold: 0,
      banMs: 30_000,
    };
    const client = (store as unknown as { redis: Redis }).redis;
    const sent = jest.spyOn(client, 'sendCommand');
    await store.consume(request);
    await store.consume(request); // refused: the first refusal bans with threshold 0
    expect(sent.mock.calls.filter(isScript)).toHaveLength(2);
    expect(sent.mock.calls).toHaveLength(2);
    sent.mockRestore();
    const [minute, day, ban] = store.keysOf(request);
    expect(await admin.hgetall(minute)).toEqual({ s: String(T - 10_000), c: '1', r: '0' }); // the refusal count restarts after a ban
    expect(await admin.pttl(minute)).toBeLessThanOrEqual(50_000 + 5_000);
    expect(await admin.pttl(day)).toBeLessThanOrEqual(DAY - 10_000 - 12 * 3_600_000 + 5_000);
    expect(await admin.pttl(day)).toBeGreaterThan(DAY - 10_000 - 12 * 3_600_000 - 60_000);
    expect(await admin.get(ban)).toBe(String(T + 30_000));
    expect(await admin.pttl(ban)).toBeGreaterThan(30_000 + 2 * DAY - 60_000);
    expect(RATE_LIMIT_SCRIPT_SHA).toMatch(/^[0-9a-f]{40}$/);
    expect(await admin.script('EXISTS', RATE_LIMIT_SCRIPT_SHA)).toEqual([1]);
  });

  it("keeps an API key's counters and ban without expiry: a fixed set of keys no volatile policy evicts", async () => {
    const request: ConsumeRequest = {
      subject: 'key:persistent',
      nowMs: T,
      windows: [{ name: 'minute', ttlMs: MINUTE, limit: 1 }],
      banThreshold: 0,
      banMs: 30_000,
    };
    await store.consume(request);
    await store.consume(request);
    const [minute, ban] = store.keysOf(request);
    expect(await admin.pttl(minute)).toBe(-1);
    expect(await admin.pttl(ban)).toBe(-1);
    // The next minute reuses the same hash.
    await store.consume({ ...request, nowMs: T + 51_000 });
    expect(await admin.hgetall(minute)).toEqual({ s: String(T + 50_000), c: '1', r: '0' });
    expect(store.keysOf({ ...request, nowMs: T + 51_000 })).toEqual(store.keysOf(request));
  });

  describe('leases', () => {
    const vast = windowsOf({ perMinute: 1_000_000_000, perDay: 2_000_000_000 });
    const req = (subject: string, nowMs: number, windows: WindowSpec[] = vast): ConsumeRequest => ({
      subject,
      nowMs,
      windows,
      banThreshold: 20,
      banMs: 90_000,
    });

    /** The rate-limit scripts the store sends while `run` runs. */
    async function scriptsSent(run: () => Promise<void>): Promise<number> {
      const sent = jest.spyOn((store as unknown as { redis: Redis }).redis, 'sendCommand');
      try {
        await run();
        return sent.mock.calls.filter(isScript).length;
      } finally {
        sent.mockRestore();
      }
    }

    it('start at 2 counts and grow to LEASE_MAX while the subject spends fast, each request still counted once', async () => {
      const counts: number[] = [];
      const scripts = await scriptsSent(async () => {
        for (let i = 0; i < 2 * LEASE_MAX + 2; i++) {
          const r = await store.consume(req('key:lease', T));
          expect(r.outcome).toBe('allowed');
          counts.push(r.windows[0].count);
        }
      });
      // Leases of 2, LEASE_MAX and LEASE_MAX counts.
      expect(scripts).toBe(3);
      expect(counts).toEqual(Array.from({ length: 2 * LEASE_MAX + 2 }, (_, i) => i + 1));
      expect(await admin.hget(store.keysOf(req('key:lease', T))[0], 'c')).toBe(String(2 + 2 * LEASE_MAX));
    });

    it('serve a concurrent burst from one lease request at a time, each request counted once', async () => {
      let results: ConsumeResult[] = [];
      const scripts = await scriptsSent(async () => {
        results = await Promise.all(Array.from({ length: 200 }, async () => store.consume(req('key:burst', T))));
      });
      expect(scripts).toBe(1 + Math.ceil((200 - 2) / LEASE_MAX));
      expect(results.map((r) => r.windows[0].count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
    });

    it('give back what an ended lease did not spend, and ask for twice what it spent', async () => {
      await store.consume(req('key:refund', T));
      expect(await admin.hget(store.keysOf(req('key:refund', T))[0], 'c')).toBe('2');
      // The ban channel is heard (the store waits for it to start): the lease lives long.
      const later = await store.consume(req('key:refund', T + LONG_LEASE_MS)); // same minute, lease over
      expect(later.windows[0].count).toBe(2);
      // 1 given back, 2 taken: the last lease spent 1 in its whole lifetime.
      expect(await admin.hget(store.keysOf(req('key:refund', T))[0], 'c')).toBe('3');
    });

    it("give back an ended lease's unspent counts to the day when its minute is over", async () => {
      const windows = windowsOf({ perMinute: 100 * LEASE_MAX, perDay: 10_000 * LEASE_MAX });
      const [minute, day] = store.keysOf(req('key:day-refund', T, windows));
      for (let i = 0; i < 3; i++) await store.consume(req('key:day-refund', T, windows)); // leases of 2 and LEASE_MAX
      const taken = String(2 + LEASE_MAX);
      expect([await admin.hget(minute, 'c'), await admin.hget(day, 'c')]).toEqual([taken, taken]);
      const next = await store.consume(req('key:day-refund', T + MINUTE, windows));
      // The minute starts again; the day gets back the LEASE_MAX - 1 counts the lease did not
      // spend, and both take the next lease of 2.
      expect(next.windows.map((w) => w.count)).toEqual([1, 4]);
      expect([await admin.hget(minute, 'c'), await admin.hget(day, 'c')]).toEqual(['2', '5']);
    });

    it('are not taken at a pace that would reach the limit while a lease lasts: decided request by request', async () => {
      const windows: WindowSpec[] = [{ name: 'minute', ttlMs: MINUTE, limit: 1_000 }];
      const at = T + 20_000; // 30 s into the minute
      // Two subjects met in the middle of a minute: one has spent 100 of it, the other 800.
      for (const [subject, spent] of [
        ['key:slow', 100],
        ['key:fast', 800],
      ] as const) {
        await admin.hset(store.keysOf(req(subject, at, windows))[0], {
          s: String(at - 30_000),
          c: String(spent),
          r: '0',
        });
      }
      const slowScripts = await scriptsSent(async () => {
        for (let i = 0; i < 4; i++) expect((await store.consume(req('key:slow', at, windows))).outcome).toBe('allowed');
      });
      const fastScripts = await scriptsSent(async () => {
        for (let i = 0; i < 4; i++) expect((await store.consume(req('key:fast', at, windows))).outcome).toBe('allowed');
      });
      // 100 in 30 s leaves far more than two leases' worth of that pace: a lease of 2, then one
      // of as much of the room left as a lease may take.
      expect(slowScripts).toBe(2);
      expect(await admin.hget(store.keysOf(req('key:slow', at, windows))[0], 'c')).toBe(
        String(102 + Math.floor((1_000 - 102) / LEASE_HEADROOM)),
      );
      // 800 in 30 s is 267 per two leases' lifetime: more than its 200 left, so no lease.
      expect(fastScripts).toBe(4);
      expect(await admin.hget(store.keysOf(req('key:fast', at, windows))[0], 'c')).toBe('804');
    });

    it('never let a window admit more than its limit, shared by two instances near the limit', async () => {
      const other = newStore();
      await other.onModuleInit();
      try {
        const windows: WindowSpec[] = [{ name: 'minute', ttlMs: MINUTE, limit: 700 }];
        const allowed: number[] = [0, 0];
        for (let i = 0; i < 800; i++) {
          const r = await [store, other][i % 2].consume(req('key:near', T, windows));
          if (r.outcome === 'allowed') allowed[i % 2] += 1;
          expect(r.windows[0].count).toBeLessThanOrEqual(700);
        }
        expect(allowed[0] + allowed[1]).toBe(700);
        expect(await admin.hget(store.keysOf(req('key:near', T, windows))[0], 'c')).toBe('700');
      } finally {
        await other.onModuleDestroy();
      }
    });

    it('end at once on every instance when any instance bans the subject (the ban channel)', async () => {
      const other = newStore();
      await other.onModuleInit();
      try {
        const windows: WindowSpec[] = [{ name: 'minute', ttlMs: MINUTE, limit: 1_000_000 }];
        const asked = (nowMs: number, banThreshold = 20): ConsumeRequest => ({
          subject: 'key:banned-elsewhere',
          nowMs,
          windows,
          banThreshold,
          banMs: 90_000,
        });
        // `other` holds a lease of LEASE_MAX counts, of which it has spent 2.
        for (let i = 0; i < 3; i++) expect((await other.consume(asked(T))).outcome).toBe('allowed');
        expect((await other.peek(asked(T))).bannedUntilMs).toBeUndefined();
        // The window fills up elsewhere, and `store` bans the key at its first refusal.
        await admin.hset(store.keysOf(asked(T))[0], 'c', '1000000');
        const refused = await store.consume(asked(T + 1_000, 0));
        expect(refused).toMatchObject({ outcome: 'banned', banStarted: true });
        // `other` drops its lease on hearing the ban, long before the lease would end.
        await waitFor(async () => (await other.peek(asked(T + 1_000))).bannedUntilMs !== undefined, {
          what: "the ban to end other's lease",
        });
        expect((await other.consume(asked(T + 1_000))).outcome).toBe('banned');
      } finally {
        await other.onModuleDestroy();
      }
    });

    it('are never taken for a free key: 60 a minute is decided request by request', async () => {
      const scripts = await scriptsSent(async () => {
        for (let i = 0; i < 5; i++)
          await store.consume(req('key:free-lease', T, windowsOf({ perMinute: 60, perDay: 1_000 })));
      });
      expect(scripts).toBe(5);
    });

    it('serve a pro key sending a request every two seconds with three scripts in its minute', async () => {
      const pro = windowsOf({ perMinute: 300, perDay: 10_000 });
      const minuteStart = Date.parse('2026-11-22T12:05:00Z');
      const counts: number[] = [];
      const scripts = await scriptsSent(async () => {
        for (let i = 0; i < 30; i++)
          counts.push((await store.consume(req('key:pro-pace', minuteStart + 2_000 * i, pro))).windows[0].count);
      });
      // A lease of 2, then two of a twentieth of the minute's room (14 each), each lasting 28 s.
      expect(scripts).toBe(3);
      expect(counts).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(await admin.hget(store.keysOf(req('key:pro-pace', minuteStart, pro))[0], 'c')).toBe('30');
    });
  });

  it('makes no memory store while Redis answers (its LRUs are allocated in full when made)', async () => {
    const fallback = jest.fn(memoryStore);
    const other = newStore(REDIS_URL as string, PREFIX, fallback);
    await other.onModuleInit();
    try {
      const windows = [{ name: 'minute', ttlMs: MINUTE, limit: 1_000 }];
      for (let i = 0; i < 5; i++)
        expect(
          (await other.consume({ subject: 'key:lazy', nowMs: T, windows, banThreshold: 20, banMs: 1 })).outcome,
        ).toBe('allowed');
      expect(other.shared).toBe(true);
      expect(fallback).not.toHaveBeenCalled();
    } finally {
      await other.onModuleDestroy();
    }
  });

  it('falls back to EVAL when Redis does not know the script (NOSCRIPT)', async () => {
    // Redis forgets its scripts (a restart, a failover to a replica that never ran it): the
    // connection still believes it loaded, sends EVALSHA, and then EVAL.
    await admin.script('FLUSH');
    const request: ConsumeRequest = {
      subject: 'key:noscript',
      nowMs: T,
      windows: [{ name: 'minute', ttlMs: MINUTE, limit: 2 }],
      banThreshold: 20,
      banMs: 1,
    };
    expect((await store.consume(request)).outcome).toBe('allowed');
    expect(store.shared).toBe(true);
    expect(await admin.hget(store.keysOf(request)[0], 'c')).toBe('1');
    expect(await admin.script('EXISTS', RATE_LIMIT_SCRIPT_SHA)).toEqual([1]);
  });
});

describe('RedisRateLimitStore without a reachable Redis', () => {
  it('answers from memory at once, logs the outage once, and never throws', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const fallback = jest.fn(memoryStore);
    const store = newStore('redis://127.0.0.1:1', 'unreachable:', fallback);
    const scripts: jest.SpyInstance[] = [];
    try {
      await store.onModuleInit();
      const request: ConsumeRequest = {
        subject: 'key:1',
        nowMs: T,
        windows: [{ name: 'minute', ttlMs: MINUTE, limit: 3 }],
        banThreshold: 20,
        banMs: 1,
      };
      // At once: decided in memory without a command to Redis (none could be answered).
      scripts.push(jest.spyOn(Redis.prototype, 'sendCommand'));
      const outcomes = [];
      for (let i = 0; i < 4; i++) outcomes.push((await store.consume(request)).outcome);
      expect(scripts[0].mock.calls.filter(isScript)).toHaveLength(0);
      expect(outcomes).toEqual(['allowed', 'allowed', 'allowed', 'limited']);
      expect(fallback).toHaveBeenCalledTimes(1); // made at the first request it decided, then kept
      expect(store.shared).toBe(false);
      expect(warn.mock.calls.filter(([m]) => /Redis unavailable/.test(String(m)))).toHaveLength(1);
    } finally {
      await store.onModuleDestroy();
      warn.mockRestore();
      for (const spy of scripts) spy.mockRestore();
    }
  });
});
