import fc from 'fast-check';
import { parseRfc3339DateTime } from './rfc3339.js';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Fields of a date-time, each within its range. */
const fields = fc.record({
  year: fc.integer({ min: 0, max: 9999 }),
  month: fc.integer({ min: 1, max: 12 }),
  day: fc.integer({ min: 1, max: 28 }),
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.integer({ min: 0, max: 59 }),
  second: fc.integer({ min: 0, max: 59 }),
  ms: fc.integer({ min: 0, max: 999 }),
  offset: fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
});
type Fields = typeof fields extends fc.Arbitrary<infer T> ? T : never;

function date(f: Fields): string {
  return `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}`;
}
function time(f: Fields): string {
  return `${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}.${pad(f.ms, 3)}`;
}
function offset(minutes: number): string {
  const a = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}
/** The instant the fields name, computed apart from the parser. */
function instant(f: Fields): number {
  const utc = new Date(0);
  utc.setUTCFullYear(f.year, f.month - 1, f.day);
  utc.setUTCHours(f.hour, f.minute, f.second, f.ms);
  return utc.getTime() - f.offset * 60_000;
}

describe('parseRfc3339DateTime', () => {
  it('reads every date-time with an offset as the instant it names', () => {
    fc.assert(
      fc.property(fields, fc.boolean(), (f, lower) => {
        const text = `${date(f)}${lower ? 't' : 'T'}${time(f)}${offset(f.offset)}`;
        expect(parseRfc3339DateTime(text)?.getTime()).toBe(instant(f));
        const utc = `${date(f)}T${time(f)}${lower ? 'z' : 'Z'}`;
        expect(parseRfc3339DateTime(utc)?.getTime()).toBe(instant({ ...f, offset: 0 }));
      }),
    );
    expect(parseRfc3339DateTime('2027-01-31T09:00:00+09:00')?.toISOString()).toBe('2027-01-31T00:00:00.000Z');
    expect(parseRfc3339DateTime('2028-02-29T00:00:00.123456789Z')?.toISOString()).toBe('2028-02-29T00:00:00.123Z');
    expect(parseRfc3339DateTime('2000-02-29T00:00:00-00:00')?.toISOString()).toBe('2000-02-29T00:00:00.000Z');
  });

  it('refuses a date-time without an offset, whatever its fields', () => {
    fc.assert(
      fc.property(fields, (f) => {
        expect(parseRfc3339DateTime(`${date(f)}T${time(f)}`)).toBeNull();
        expect(parseRfc3339DateTime(`${date(f)}T${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}`)).toBeNull();
        expect(parseRfc3339DateTime(date(f))).toBeNull();
      }),
    );
  });

  it('refuses week dates, ordinal dates and the other ISO 8601 forms that are not RFC 3339', () => {
    const week = fc.tuple(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 1, max: 53 }),
      fc.integer({ min: 1, max: 7 }),
    );
    fc.assert(
      fc.property(week, fc.integer({ min: 1, max: 366 }), ([y, w, d], ordinal) => {
        for (const text of [
          `${pad(y, 4)}-W${pad(w)}-${d}`,
          `${pad(y, 4)}-W${pad(w)}-${d}T00:00:00Z`,
          `${pad(y, 4)}W${pad(w)}${d}T000000Z`,
          `${pad(y, 4)}-${pad(ordinal, 3)}`,
          `${pad(y, 4)}-${pad(ordinal, 3)}T00:00:00Z`,
        ]) {
          expect(parseRfc3339DateTime(text)).toBeNull();
        }
      }),
    );
    for (const text of [
      '2027-01-31T00:00Z', // no seconds
      '20270131T000000Z', // basic format
      '2027-01-31 00:00:00Z', // space
      '2027-01-31T00:00:00+0900', // offset without colon
      '2027-01-31T00:00:00+09', // hours only
      '+002027-01-31T00:00:00Z', // expanded year
      '2027-01-31T00:00:00.Z', // empty fraction
      '2027-01-31T00:00:00,5Z', // comma fraction
      '２０２７-01-31T00:00:00Z', // full-width digits
      ' 2027-01-31T00:00:00Z',
      '2027-01-31T00:00:00Z\n',
      'tomorrow',
      '',
    ]) {
      expect(parseRfc3339DateTime(text)).toBeNull();
    }
  });

  it('refuses each field out of its range', () => {
    const out = fc.oneof(
      fc.record({ field: fc.constant('month' as const), value: fc.constantFrom(0, 13, 99) }),
      fc.record({ field: fc.constant('day' as const), value: fc.constantFrom(0, 32, 99) }),
      fc.record({ field: fc.constant('hour' as const), value: fc.integer({ min: 24, max: 99 }) }),
      fc.record({ field: fc.constant('minute' as const), value: fc.integer({ min: 60, max: 99 }) }),
      fc.record({ field: fc.constant('second' as const), value: fc.integer({ min: 60, max: 99 }) }),
      fc.record({ field: fc.constant('offsetHour' as const), value: fc.integer({ min: 24, max: 99 }) }),
      fc.record({ field: fc.constant('offsetMinute' as const), value: fc.integer({ min: 60, max: 99 }) }),
    );
    fc.assert(
      fc.property(fields, out, (f, { field, value }) => {
        const v = { ...f, offsetHour: 1, offsetMinute: 0, [field]: value };
        const text = `${pad(v.year, 4)}-${pad(v.month)}-${pad(v.day)}T${pad(v.hour)}:${pad(v.minute)}:${pad(v.second)}+${pad(v.offsetHour)}:${pad(v.offsetMinute)}`;
        expect(parseRfc3339DateTime(text)).toBeNull();
      }),
    );
    // Days past the end of their month, leap years by the Gregorian rule.
    for (const text of ['2027-02-29', '1900-02-29', '2100-02-29', '2027-04-31', '2027-02-30', '2027-06-31']) {
      expect(parseRfc3339DateTime(`${text}T00:00:00Z`)).toBeNull();
    }
    for (const text of ['2028-02-29', '2000-02-29', '0000-02-29', '2027-01-31', '2027-12-31']) {
      expect(parseRfc3339DateTime(`${text}T00:00:00Z`)).not.toBeNull();
    }
  });
});
