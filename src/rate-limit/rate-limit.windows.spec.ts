import fc from 'fast-check';
import {
  blockingWindow,
  closestToExhaustion,
  ConsumeResult,
  rateLimitHeaders,
  retryAfterSeconds,
  windowReset,
  windowStart,
  WindowState,
} from './rate-limit.windows.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
const T = Date.parse('2026-11-22T12:00:10.250Z');

const state = (name: string, ttlMs: number, limit: number, count: number, nowMs = T): WindowState => ({
  name,
  ttlMs,
  limit,
  count,
  resetMs: windowReset(nowMs, ttlMs),
});

describe('fixed windows', () => {
  it('align minutes and days to UTC', () => {
    expect(new Date(windowStart(T, MINUTE)).toISOString()).toBe('2026-11-22T12:00:00.000Z');
    expect(new Date(windowReset(T, MINUTE)).toISOString()).toBe('2026-11-22T12:01:00.000Z');
    expect(new Date(windowStart(T, DAY)).toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(new Date(windowReset(T, DAY)).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    // The last millisecond of a window still belongs to it; the boundary starts the next.
    expect(windowStart(Date.parse('2026-11-22T12:00:59.999Z'), MINUTE)).toBe(Date.parse('2026-11-22T12:00:00Z'));
    expect(windowStart(Date.parse('2026-11-22T12:01:00.000Z'), MINUTE)).toBe(Date.parse('2026-11-22T12:01:00Z'));
  });

  it('contain now, start on a multiple of their length and end a whole second later', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), fc.constantFrom(1_000, MINUTE, 3_600_000, DAY), (now, ttl) => {
        const start = windowStart(now, ttl);
        expect(start).toBeLessThanOrEqual(now);
        expect(now).toBeLessThan(start + ttl);
        expect(start % ttl).toBe(0);
        expect(windowReset(now, ttl) % 1000).toBe(0);
      }),
    );
  });
});

describe('the window the headers describe', () => {
  it('is the one with fewest remaining', () => {
    expect(closestToExhaustion([state('minute', MINUTE, 60, 1), state('day', DAY, 1000, 1)]).name).toBe('minute');
    expect(closestToExhaustion([state('minute', MINUTE, 60, 1), state('day', DAY, 1000, 999)]).name).toBe('day');
  });

  it('on a tie is the one resetting later', () => {
    expect(closestToExhaustion([state('minute', MINUTE, 5, 1), state('day', DAY, 5, 1)]).name).toBe('day');
    expect(closestToExhaustion([state('day', DAY, 5, 1), state('minute', MINUTE, 5, 1)]).name).toBe('day');
    expect(closestToExhaustion([state('minute', MINUTE, 60, 70), state('day', DAY, 100, 100)]).name).toBe('day');
  });

  it('is never beaten by another window (property)', () => {
    const windows = fc.array(
      fc.record({
        ttl: fc.constantFrom(1_000, MINUTE, 3_600_000, DAY),
        limit: fc.integer({ min: 0, max: 2_000 }),
        count: fc.integer({ min: 0, max: 2_100 }),
      }),
      { minLength: 1, maxLength: 4 },
    );
    fc.assert(
      fc.property(windows, fc.integer({ min: 0, max: 2 ** 47 }), (ws, now) => {
        const states = ws.map((w, i) => state(`w${i}`, w.ttl, w.limit, w.count, now));
        const best = closestToExhaustion(states);
        const rem = (w: WindowState) => Math.max(0, w.limit - w.count);
        for (const w of states) {
          expect(rem(best) < rem(w) || (rem(best) === rem(w) && best.resetMs >= w.resetMs)).toBe(true);
        }
      }),
    );
  });
});

describe('headers and Retry-After', () => {
  it('give limit, remaining and the reset as epoch seconds', () => {
    const result: ConsumeResult = { outcome: 'allowed', windows: [state('minute', MINUTE, 60, 1), state('day', DAY, 1000, 1)] };
    expect(rateLimitHeaders(result)).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '59',
      'X-RateLimit-Reset': String(Date.parse('2026-11-22T12:01:00Z') / 1000),
    });
  });

  it('wait for the exhausted window that resets last', () => {
    const minuteFull: ConsumeResult = { outcome: 'limited', windows: [state('minute', MINUTE, 60, 60), state('day', DAY, 1000, 200)] };
    expect(retryAfterSeconds(minuteFull, T)).toBe(50); // 12:00:10.25 → 12:01:00, rounded up
    expect(rateLimitHeaders(minuteFull)['X-RateLimit-Remaining']).toBe('0');
    const both: ConsumeResult = { outcome: 'limited', windows: [state('minute', MINUTE, 60, 60), state('day', DAY, 60, 60)] };
    expect(retryAfterSeconds(both, T)).toBe(Math.ceil((Date.parse('2026-11-23T00:00:00Z') - T) / 1000));
    expect(rateLimitHeaders(both)['X-RateLimit-Reset']).toBe(String(Date.parse('2026-11-23T00:00:00Z') / 1000));
  });

  it('during a ban say 0 remaining until the ban ends', () => {
    const until = T + 900_000;
    const banned: ConsumeResult = { outcome: 'banned', bannedUntilMs: until, windows: [state('minute', MINUTE, 60, 3), state('day', DAY, 1000, 3)] };
    expect(rateLimitHeaders(banned)).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Math.ceil(until / 1000)),
    });
    expect(retryAfterSeconds(banned, T)).toBe(900);
  });

  it('Retry-After is a whole number of seconds, at least 1, never before the window resets (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), fc.integer({ min: 0, max: 100 }), (now, limit) => {
        const result: ConsumeResult = { outcome: 'limited', windows: [state('minute', MINUTE, limit, limit, now)] };
        const s = retryAfterSeconds(result, now);
        expect(Number.isInteger(s)).toBe(true);
        expect(s).toBeGreaterThanOrEqual(1);
        expect(now + s * 1000).toBeGreaterThanOrEqual(windowReset(now, MINUTE));
        expect(now + (s - 1) * 1000).toBeLessThan(windowReset(now, MINUTE));
      }),
    );
  });
});

describe('blockingWindow', () => {
  const specs = [
    { name: 'minute', ttlMs: MINUTE, limit: 60 },
    { name: 'day', ttlMs: DAY, limit: 1000 },
  ];
  it('is -1 while every window has room, else the exhausted one resetting last', () => {
    expect(blockingWindow(specs, [59, 999], T)).toBe(-1);
    expect(blockingWindow(specs, [60, 10], T)).toBe(0);
    expect(blockingWindow(specs, [10, 1000], T)).toBe(1);
    expect(blockingWindow(specs, [60, 1000], T)).toBe(1);
  });
});
