import fc from 'fast-check';
import { QuotaCrossings, reaches, type QuotaCrossing } from './quota-crossings.js';
import type { WindowState } from './rate-limit.windows.js';

const DAY_MS = 86_400_000;
const DAY = Date.UTC(2026, 10, 28);

/** A key's windows as admission sees them after a request: the minute's, and the day's with `count`. */
function windows(count: number, limit: number, dayMs = DAY): WindowState[] {
  return [
    { name: 'minute', ttlMs: 60_000, limit: 1_000_000, count: 1, resetMs: dayMs + 60_000 },
    { name: 'day', ttlMs: DAY_MS, limit, count, resetMs: dayMs + DAY_MS },
  ];
}

/** The crossings one key's counts are expected to give: one per threshold its highest count reaches. */
function expected(counts: readonly number[], limit: number): number[] {
  const top = Math.max(0, ...counts);
  return [80, 100].filter((t) => top * 100 >= limit * t);
}

const byThreshold = (a: QuotaCrossing, b: QuotaCrossing) => a.threshold - b.threshold;

describe('reaches', () => {
  it('is count >= ceil(limit * threshold / 100)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2_000_000 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom(80, 100),
        (count, limit, t) => reaches(count, limit, t) === count >= Math.ceil((limit * t) / 100),
      ),
    );
  });

  it('puts 80% of 10 at 8 and 100% at 10', () => {
    expect([7, 8, 9, 10].map((n) => reaches(n, 10, 80))).toEqual([false, true, true, true]);
    expect([9, 10].map((n) => reaches(n, 10, 100))).toEqual([false, true]);
  });
});

describe('QuotaCrossings', () => {
  it('one instance counting 1, 2, … notes each threshold once, at the request that reaches it', () => {
    const crossings = new QuotaCrossings();
    for (let n = 1; n <= 10; n++) crossings.see('7', windows(n, 10));
    // Refused requests after the last unit: the count stays at the limit.
    for (let n = 0; n < 5; n++) crossings.see('7', windows(10, 10));
    expect(crossings.take(DAY).sort(byThreshold)).toEqual([
      { keyId: '7', dayMs: DAY, threshold: 80, limit: 10, used: 8 },
      { keyId: '7', dayMs: DAY, threshold: 100, limit: 10, used: 10 },
    ]);
    crossings.see('7', windows(10, 10));
    expect(crossings.take(DAY)).toEqual([]);
  });

  it('notes every threshold reached exactly once, whatever counts are skipped, repeated or seen out of order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5_000 }),
        fc.array(fc.integer({ min: 0, max: 6_000 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 5 }),
        (limit, counts, flushes) => {
          const crossings = new QuotaCrossings();
          const taken: QuotaCrossing[] = [];
          counts.forEach((n, i) => {
            crossings.see('42', windows(n, limit));
            if (i % flushes === 0) taken.push(...crossings.take(DAY));
          });
          taken.push(...crossings.take(DAY));
          expect(taken.map((c) => c.threshold).sort((a, b) => a - b)).toEqual(expected(counts, limit));
          for (const c of taken) expect(reaches(c.used, limit, c.threshold)).toBe(true);
        },
      ),
    );
  });

  it('notes nothing below 80% of the day, and ignores the minute window', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.nat(), (limit, raw) => {
        const crossings = new QuotaCrossings();
        const below = Math.ceil((limit * 80) / 100) - 1;
        crossings.see('1', windows(raw % (below + 1), limit));
        return crossings.isEmpty;
      }),
    );
  });

  it('a limit of 1 reaches both thresholds at its first request', () => {
    const crossings = new QuotaCrossings();
    crossings.see('1', windows(1, 1));
    expect(crossings.take(DAY).map((c) => c.threshold)).toEqual([80, 100]);
  });

  it('keys are apart, and a new UTC day notes them again', () => {
    const crossings = new QuotaCrossings();
    crossings.see('1', windows(9, 10));
    crossings.see('2', windows(10, 10));
    expect(crossings.take(DAY).map((c) => `${c.keyId}:${c.threshold}`)).toEqual(['1:80', '2:80', '2:100']);
    crossings.see('1', windows(8, 10, DAY + DAY_MS));
    expect(crossings.take(DAY + DAY_MS)).toEqual([
      { keyId: '1', dayMs: DAY + DAY_MS, threshold: 80, limit: 10, used: 8 },
    ]);
  });

  it('crossings put back are taken again; forgotten ones are noted again by the next request', () => {
    const crossings = new QuotaCrossings();
    crossings.see('5', windows(8, 10));
    const first = crossings.take(DAY);
    crossings.see('5', windows(10, 10));
    crossings.restore(first);
    expect(crossings.take(DAY).map((c) => c.threshold)).toEqual([100, 80]);
    crossings.see('5', windows(10, 10));
    expect(crossings.isEmpty).toBe(true);
    crossings.forget([{ keyId: '5', dayMs: DAY, threshold: 100, limit: 10, used: 10 }]);
    crossings.see('5', windows(10, 10));
    expect(crossings.take(DAY).map((c) => c.threshold)).toEqual([80, 100]);
  });
});
