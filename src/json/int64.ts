/** The largest int64: the upper bound of every identifier (docs/api.md, "Identifiers (int64)"). */
export const INT64_MAX = 9223372036854775807n;

const DECIMAL = /^[1-9][0-9]{0,18}$/;

/** A positive int64 from its decimal text (path and query parameters), or null. */
export function parsePositiveInt64(text: string): bigint | null {
  if (!DECIMAL.test(text)) return null;
  const value = BigInt(text);
  return value <= INT64_MAX ? value : null;
}

/** A positive int64 from a parsed JSON value (a number or a bigint), or null. */
export function toPositiveInt64(value: unknown): bigint | null {
  if (typeof value === 'bigint') return value >= 1n && value <= INT64_MAX ? value : null;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return BigInt(value);
  return null;
}
