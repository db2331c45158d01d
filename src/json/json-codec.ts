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

/**
 * Writes JSON with `bigint` values as exact JSON numbers: the output of lossless-json's
 * `stringify`, which stays the reference (json-codec.spec.ts compares the two).
 *
 * Every response body passes through here, so the common case (plain objects and arrays of
 * strings, numbers, bigints, booleans and null, such as a page of Pets) has a direct writer,
 * about twice as fast as the generic one (profiled under `npm run bench`); anything else (a
 * Date, a class instance, an object with toJSON) is handed to lossless-json unchanged.
 */
export function stringifyJson(value: unknown): string {
  // undefined, a function or a symbol at the top level has no JSON text.
  return writeValue(value) ?? 'null';
}

// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const quotedKeys = new Map<string, string>();

function writeString(s: string): string {
  // JSON.stringify escapes quotes, backslashes, control characters and lone surrogates;
  // a string with none of them is written as is. Long strings are left to it (the test
  // would scan them twice).
  return s.length <= 256 && !NEEDS_ESCAPE.test(s) ? `"${s}"` : JSON.stringify(s);
}

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = `${writeString(key)}:`;
    // Keys of response bodies come from the code, a small set; stop caching if that changes.
    if (quotedKeys.size < 1000) quotedKeys.set(key, quoted);
  }
  return quoted;
}

function writeValue(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return writeString(value);
    case 'number':
      return JSON.stringify(value); // NaN and Infinity become null
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          out += writeValue(value[i]) ?? 'null';
        }
        return `${out}]`;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (
        (proto !== Object.prototype && proto !== null) ||
        typeof (value as { toJSON?: unknown }).toJSON === 'function'
      ) {
        return stringify(value);
      }
      let out = '{';
      for (const key of Object.keys(value)) {
        const written = writeValue((value as Record<string, unknown>)[key]);
        if (written === undefined) continue;
        out += out.length > 1 ? `,${quotedKey(key)}${written}` : `${quotedKey(key)}${written}`;
      }
      return `${out}}`;
    }
    default:
      return undefined;
  }
}
