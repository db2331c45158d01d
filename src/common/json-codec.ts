import { isInteger, parse, stringify } from 'lossless-json';

/**
 * Lossless JSON for request and response bodies (contract, "Identifiers (int64)").
 *
 * `JSON.parse` turns 9007199254740993 into 9007199254740992, so bodies are parsed with
 * lossless-json: an integer literal that does not fit a double exactly becomes a `bigint`,
 * a safe one a `number`. Any other number literal (fraction or exponent) becomes a `number`
 * unless that would change its value; then it stays an `InexactNumber`, which no field
 * accepts. Nothing is rounded behind the caller's back.
 */
export class InexactNumber {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

function parseNumber(text: string): number | bigint | InexactNumber {
  if (isInteger(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  const n = Number(text);
  if (!Number.isFinite(n)) return new InexactNumber(text);
  // An integral value written as a fraction or with an exponent (1e3, 2.0) is kept only
  // while a double represents it exactly.
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) return new InexactNumber(text);
  return n;
}

export class JsonSyntaxError extends Error {}

/** Parses JSON text losslessly. Throws JsonSyntaxError for anything that is not one JSON value. */
export function parseJson(text: string): unknown {
  try {
    return parse(text, undefined, parseNumber);
  } catch (err) {
    // lossless-json reports syntax and duplicate keys; a pathologically deep document can
    // exhaust the stack (RangeError). Both are the client's malformed input.
    throw new JsonSyntaxError(err instanceof Error ? err.message : String(err));
  }
}

/** Writes JSON with `bigint` values as exact JSON numbers. */
export function stringifyJson(value: unknown): string {
  const out = stringify(value);
  // stringify returns undefined only for undefined/functions at the top level.
  return out ?? 'null';
}
