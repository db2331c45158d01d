import fc from 'fast-check';
import { HOUR_MS, USAGE_OPERATIONS, UsageCounts, type UsageOperation, type UsageRow } from './usage-counts.js';

/** One request: a key, an operation, an instant, whether it was answered 429. */
const request = fc.record({
  key: fc.constantFrom('1', '2', '3', '9223372036854775807'),
  operation: fc.constantFrom(...USAGE_OPERATIONS),
  at: fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2026, 0, 1) + 5 * HOUR_MS }),
  limited: fc.boolean(),
});

type Request = { key: string; operation: UsageOperation; at: number; limited: boolean };

/** The expected rows: the requests summed by key, hour and operation (order-independent). */
function sums(requests: readonly Request[]): Map<string, { requests: number; limited: number }> {
  const out = new Map<string, { requests: number; limited: number }>();
  for (const r of requests) {
    const k = `${r.key}@${Math.floor(r.at / HOUR_MS) * HOUR_MS}/${r.operation}`;
    const t = out.get(k) ?? { requests: 0, limited: 0 };
    t.requests++;
    if (r.limited) t.limited++;
    out.set(k, t);
  }
  return out;
}

function asMap(rows: readonly UsageRow[]): Map<string, { requests: number; limited: number }> {
  const out = new Map<string, { requests: number; limited: number }>();
  for (const row of rows) {
    const k = `${row.keyId}@${row.hour}/${row.operation}`;
    const t = out.get(k) ?? { requests: 0, limited: 0 };
    t.requests += row.requests;
    t.limited += row.limited;
    out.set(k, t);
  }
  return out;
}

describe('UsageCounts', () => {
  it('sums any sequence of records exactly, by key, UTC hour and operation, one row each, oldest hour first', () => {
    fc.assert(
      fc.property(fc.array(request, { maxLength: 300 }), (requests) => {
        const counts = new UsageCounts();
        for (const r of requests) counts.record(r.key, r.operation, r.at, r.limited);
        const rows = counts.take();
        expect(asMap(rows)).toEqual(sums(requests));
        expect(rows).toHaveLength(sums(requests).size);
        for (const row of rows) expect(row.hour % HOUR_MS).toBe(0);
        expect(rows.map((r) => r.hour)).toEqual([...rows.map((r) => r.hour)].sort((a, b) => a - b));
        expect(counts.isEmpty).toBe(true);
        expect(counts.take()).toEqual([]);
      }),
    );
  });

  it('loses and doubles nothing across takes, failed writes put back and records in between', () => {
    // Each step records a request, or takes the counts and either "writes" them or puts them back.
    const step = fc.oneof(
      request.map((r) => ({ kind: 'record' as const, r })),
      fc.boolean().map((ok) => ({ kind: 'flush' as const, ok })),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const counts = new UsageCounts();
        const written: UsageRow[] = [];
        const made: Request[] = [];
        for (const s of steps) {
          if (s.kind === 'record') {
            counts.record(s.r.key, s.r.operation, s.r.at, s.r.limited);
            made.push(s.r);
          } else {
            const rows = counts.take();
            if (s.ok) written.push(...rows);
            else counts.restore(rows);
          }
        }
        written.push(...counts.take());
        expect(asMap(written)).toEqual(sums(made));
      }),
    );
  });

  it('keeps counting in the hour at hand after a restore of older hours', () => {
    const counts = new UsageCounts();
    const t0 = Date.UTC(2026, 10, 27, 6, 30);
    counts.record('7', 'getPet', t0, false);
    const taken = counts.take();
    counts.record('7', 'getPet', t0 + HOUR_MS, true);
    counts.restore(taken);
    counts.record('7', 'getPet', t0 + HOUR_MS, false);
    counts.record('7', 'listPets', t0 + HOUR_MS, false);
    counts.record('7', 'getPet', t0, false);
    expect(counts.take()).toEqual([
      { keyId: '7', hour: Date.UTC(2026, 10, 27, 6), operation: 'getPet', requests: 2, limited: 0 },
      { keyId: '7', hour: Date.UTC(2026, 10, 27, 7), operation: 'getPet', requests: 2, limited: 1 },
      { keyId: '7', hour: Date.UTC(2026, 10, 27, 7), operation: 'listPets', requests: 1, limited: 0 },
    ]);
  });
});
