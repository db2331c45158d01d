import { loadConfig } from '../config/config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { Clock } from '../time/clock.js';
import { MemoryRateLimitStore } from './memory.store.js';
import { keySubject, RateLimiter, THROTTLERS, WINDOWS, windowsOf, type RateLimitSubject } from './rate-limiter.js';

class FixedClock extends Clock {
  constructor(public current = Date.parse('2026-11-22T12:00:10Z')) {
    super();
  }
  now(): Date {
    return new Date(this.current);
  }
}

const subject: RateLimitSubject = { id: 'key:7', plan: 'enterprise', perMinute: 2, perDay: 5 };

function limiter(clock: Clock): { limiter: RateLimiter; store: MemoryRateLimitStore } {
  const store = new MemoryRateLimitStore(clock, 1000);
  return { limiter: new RateLimiter(store, clock, loadConfig({}).rateLimit, new MetricsService()), store };
}

describe('RateLimiter', () => {
  it('gives a subject its own limits in each window of WINDOWS, and ThrottlerModule the same windows', () => {
    expect(windowsOf(subject)).toEqual([
      { name: 'minute', ttlMs: 60_000, limit: 2 },
      { name: 'day', ttlMs: 86_400_000, limit: 5 },
    ]);
    expect(THROTTLERS.map((t) => [t.name, t.ttl])).toEqual(WINDOWS.map((w) => [w.name, w.ttlMs]));
  });

  it('counts a request against the subject it is given, at its limits, and refuses beyond them', async () => {
    const clock = new FixedClock();
    const { limiter: l } = limiter(clock);
    const first = await l.count(subject);
    expect(first.refusal).toBeUndefined();
    expect(first.headers['X-RateLimit-Limit']).toBe('2');
    await l.count(subject);
    const third = await l.count(subject);
    expect(third.result.outcome).toBe('limited');
    expect(third.refusal?.message).toMatch(/^Rate limit exceeded for this API key \(2 requests per minute\)/);
    // Another subject has counters of its own.
    const other = keySubject({ keyId: '8', plan: 'pro', perMinute: 300, perDay: 10_000, scopes: [] });
    expect((await l.count(other)).refusal).toBeUndefined();
  });

  it('reads the quota the next counted request would find, counting nothing', async () => {
    const clock = new FixedClock();
    const { limiter: l } = limiter(clock);
    await l.count(subject);
    const read = await l.read(subject);
    expect(read.windows.map((w) => [w.name, w.limit, w.count])).toEqual([
      ['minute', 2, 1],
      ['day', 5, 1],
    ]);
    expect((await l.read(subject)).windows.map((w) => w.count)).toEqual([1, 1]);
  });
});

describe("RateLimitStore.increment (ThrottlerModule's storage interface)", () => {
  it('counts one fixed window per throttler key with consume, blocked past the limit until it resets', async () => {
    const clock = new FixedClock();
    const { store } = limiter(clock);
    const hits = [];
    for (let i = 0; i < 3; i++) hits.push(await store.increment('route:a', 60_000, 2, 0, 'minute'));
    expect(hits.map((h) => [h.totalHits, h.isBlocked])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    expect(hits[2].timeToBlockExpire).toBe(50);
    expect((await store.increment('route:b', 60_000, 2, 0, 'minute')).totalHits).toBe(1);
    clock.current = Date.parse('2026-11-22T12:01:00Z');
    expect(await store.increment('route:a', 60_000, 2, 0, 'minute')).toMatchObject({ totalHits: 1, isBlocked: false });
  });
});
