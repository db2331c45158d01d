/**
 * An RFC 3339 date-time (section 5.6): full-date, `T`, full-time and its offset, `Z` or ±hh:mm,
 * as in 2027-01-31T00:00:00Z or 2027-01-31T09:00:00.5+09:00 (`t` and `z` may be lower case).
 * The instant it names, or null for anything else: a local time without an offset (each process
 * would read it in its own time zone), a date alone, ISO 8601's week and ordinal dates, a field
 * out of its range (month 13, 30 February, hour 24, offset +24:00). A leap second (:60) is
 * refused, as a Date cannot hold one; digits of a fraction beyond milliseconds are dropped.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Days in a month (1–12) of a year; the Gregorian calendar repeats every 400 years. */
function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(2000 + (year % 400), month, 0)).getUTCDate();
}

export function parseRfc3339DateTime(text: string): Date | null {
  const match = DATE_TIME.exec(text);
  if (match === null) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const [, , , , , , , fraction, sign, offsetHour, offsetMinute] = match;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  if (sign !== undefined && (Number(offsetHour) > 23 || Number(offsetMinute) > 59)) return null;
  const offsetMinutes =
    sign === undefined ? 0 : (Number(offsetHour) * 60 + Number(offsetMinute)) * (sign === '-' ? -1 : 1);
  const ms = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  // setUTCFullYear, not Date.UTC: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hour, minute - offsetMinutes, second, ms);
  return at;
}
