import fc from 'fast-check';
import { MAX_USAGE_PERIODS, parseUsageQuery, UsageQueryError } from './usage-query.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('parseUsageQuery', () => {
  it('takes ISO-8601 dates and instants, hour by default, widened to the whole periods they overlap', () => {
    expect(parseUsageQuery({ from: '2026-11-01', to: '2026-11-02' })).toEqual({
      from: new Date('2026-11-01T00:00:00Z'),
      to: new Date('2026-11-02T00:00:00Z'),
      granularity: 'hour',
    });
    expect(parseUsageQuery({ from: '2026-11-27T06:30:00+01:00', to: '2026-11-27T07:00:01Z' })).toEqual({
      from: new Date('2026-11-27T05:00:00Z'),
      to: new Date('2026-11-27T08:00:00Z'),
      granularity: 'hour',
    });
    expect(parseUsageQuery({ from: '2026-11-01T12:00Z', to: '2026-12-01', granularity: 'day' })).toEqual({
      from: new Date('2026-11-01T00:00:00Z'),
      to: new Date('2026-12-01T00:00:00Z'),
      granularity: 'day',
    });
  });

  it.each([
    [{ to: '2026-11-02' }, 'from', /from is required/],
    [{ from: '2026-11-02' }, 'to', /to is required/],
    [{ from: '2026-11-01', to: '2026-11-02', granularity: 'week' }, 'granularity', /hour or day/],
    [{ from: 'yesterday', to: '2026-11-02' }, 'from', /ISO-8601/],
    [{ from: '2026-02-30', to: '2026-03-02' }, 'from', /ISO-8601/],
    [{ from: '2026-11-01', to: '2026-11-31T10:00:00Z' }, 'to', /ISO-8601/],
    [{ from: '2026-11-27T24:00Z', to: '2026-11-29' }, 'from', /ISO-8601/],
    [{ from: '1969-12-31', to: '2026-11-29' }, 'from', /ISO-8601/],
    [{ from: '2026-11-01T10:00:00', to: '2026-11-02' }, 'from', /offset/], // no offset: whose 10:00?
    [{ from: '1764000000', to: '2026-11-02' }, 'from', /ISO-8601/],
    [{ from: '2026-11-02', to: '2026-11-02' }, 'to', /after from/],
    [{ from: '2026-11-03', to: '2026-11-02' }, 'to', /after from/],
    [{ from: '2026-01-01', to: '2026-03-01' }, 'to', /more than 1000 hours.*by day/],
    [{ from: '2020-01-01', to: '2026-01-01', granularity: 'day' }, 'to', /more than 1000 days/],
  ])('refuses %j naming the parameter', (raw, parameter, message) => {
    let error: unknown;
    try {
      parseUsageQuery(raw);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(UsageQueryError);
    expect(error).toMatchObject({ parameter, message: expect.stringMatching(message) as unknown });
  });

  it('answers any input with whole periods covering it or a UsageQueryError, nothing else (property)', () => {
    const instant = fc
      .integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) })
      .map((ms) => new Date(ms).toISOString());
    const text = fc.oneof(
      instant,
      instant.map((s) => s.slice(0, 10)),
      fc.string({ maxLength: 30 }),
    );
    fc.assert(
      fc.property(
        text,
        text,
        fc.option(fc.oneof(fc.constantFrom('hour', 'day'), fc.string({ maxLength: 6 })), { nil: undefined }),
        (from, to, granularity) => {
          let query;
          try {
            query = parseUsageQuery({ from, to, granularity });
          } catch (err) {
            expect(err).toBeInstanceOf(UsageQueryError);
            return;
          }
          const size = query.granularity === 'hour' ? HOUR : DAY;
          expect(query.from.getTime() % size).toBe(0);
          expect(query.to.getTime() % size).toBe(0);
          expect(query.from.getTime()).toBeLessThanOrEqual(Date.parse(from.length === 10 ? `${from}T00:00Z` : from));
          expect(query.to.getTime()).toBeGreaterThanOrEqual(Date.parse(to.length === 10 ? `${to}T00:00Z` : to));
          const periods = (query.to.getTime() - query.from.getTime()) / size;
          expect(periods).toBeGreaterThanOrEqual(1);
          expect(periods).toBeLessThanOrEqual(MAX_USAGE_PERIODS);
        },
      ),
    );
  });
});
