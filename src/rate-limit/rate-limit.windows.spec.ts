import fc from 'fast-check';
import { parseItem, parseList } from 'structured-headers';
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
    const result: ConsumeResult = {
      outcome: 'allowed',
      windows: [state('minute', MINUTE, 60, 1), state('day', DAY, 1000, 1)],
    };
    expect(rateLimitHeaders(result, T)).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '59',
      'X-RateLimit-Reset': String(Date.parse('2026-11-22T12:01:00Z') / 1000),
      'RateLimit-Policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      RateLimit: '"minute";r=59;t=50', // 12:00:10.25 → 12:01:00, rounded up
    });
  });

  it('wait for the exhausted window that resets last', () => {
    const minuteFull: ConsumeResult = {
      outcome: 'limited',
      windows: [state('minute', MINUTE, 60, 60), state('day', DAY, 1000, 200)],
    };
    expect(retryAfterSeconds(minuteFull, T)).toBe(50); // 12:00:10.25 → 12:01:00, rounded up
    expect(rateLimitHeaders(minuteFull, T)['X-RateLimit-Remaining']).toBe('0');
    expect(rateLimitHeaders(minuteFull, T).RateLimit).toBe('"minute";r=0;t=50');
    const both: ConsumeResult = {
      outcome: 'limited',
      windows: [state('minute', MINUTE, 60, 60), state('day', DAY, 60, 60)],
    };
    expect(retryAfterSeconds(both, T)).toBe(Math.ceil((Date.parse('2026-11-23T00:00:00Z') - T) / 1000));
    expect(rateLimitHeaders(both, T)['X-RateLimit-Reset']).toBe(String(Date.parse('2026-11-23T00:00:00Z') / 1000));
    expect(rateLimitHeaders(both, T).RateLimit).toBe(`"day";r=0;t=${retryAfterSeconds(both, T)}`);
  });

  it('during a ban say 0 remaining until the ban ends', () => {
    const until = T + 900_000;
    const banned: ConsumeResult = {
      outcome: 'banned',
      bannedUntilMs: until,
      windows: [state('minute', MINUTE, 60, 3), state('day', DAY, 1000, 3)],
    };
    expect(rateLimitHeaders(banned, T)).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Math.ceil(until / 1000)),
      'RateLimit-Policy': '"minute";q=60;w=60, "day";q=1000;w=86400',
      RateLimit: '"minute";r=0;t=900',
    });
    expect(retryAfterSeconds(banned, T)).toBe(900);
  });

  it('RateLimit and RateLimit-Policy are Structured Fields saying what X-RateLimit-* and Retry-After say (property)', () => {
    const windows = fc.tuple(
      fc.integer({ min: 1, max: 100_000 }),
      fc.integer({ min: 0, max: 100_001 }),
      fc.integer({ min: 1, max: 10_000_000 }),
      fc.integer({ min: 0, max: 10_000_001 }),
    );
    const outcome = fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 3_600_000 }));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 47 }),
        windows,
        outcome,
        (now, [perMinute, minuteCount, perDay, dayCount], banMs) => {
          const states = [
            state('minute', MINUTE, perMinute, minuteCount, now),
            state('day', DAY, perDay, dayCount, now),
          ];
          const exhausted = states.some((w) => w.count >= w.limit);
          const result: ConsumeResult =
            banMs !== undefined
              ? { outcome: 'banned', bannedUntilMs: now + banMs, windows: states }
              : { outcome: exhausted ? 'limited' : 'allowed', windows: states };
          const h = rateLimitHeaders(result, now);

          const policy = parseList(h['RateLimit-Policy']).map(([name, params]) => [name, Object.fromEntries(params)]);
          expect(policy).toEqual([
            ['minute', { q: perMinute, w: 60 }],
            ['day', { q: perDay, w: 86_400 }],
          ]);
          const [name, params] = parseItem(h.RateLimit);
          const { r, t } = Object.fromEntries(params) as { r: number; t: number };
          expect([...params.keys()]).toEqual(['r', 't']);
          // The same window as the triple, the same numbers.
          expect(policy.find(([n]) => n === name)?.[1].q).toBe(Number(h['X-RateLimit-Limit']));
          expect(r).toBe(Number(h['X-RateLimit-Remaining']));
          expect(t).toBeGreaterThanOrEqual(1);
          if (result.outcome === 'banned') {
            expect(r).toBe(0);
            expect(t).toBe(retryAfterSeconds(result, now));
          } else {
            expect(t).toBe(Number(h['X-RateLimit-Reset']) - Math.floor(now / 1000));
            if (result.outcome === 'limited') expect(t).toBe(retryAfterSeconds(result, now));
          }
        },
      ),
    );
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
