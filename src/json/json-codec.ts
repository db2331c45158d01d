import { isInteger, parse, stringify } from 'lossless-json';

/**
 * Lossless JSON for request and response bodies (docs/api.md, "Identifiers (int64)").
 *
 * `JSON.parse` turns 9007199254740993 into 9007199254740992, and `Number('0.99999999999999999')`
 * is 1, so a number is judged from its text, never from a double: a literal whose exact decimal
 * value is an integer (`7`, `7.0`, `7.000`, `7e0`, `70e-1`) becomes that integer, a `number`
 * while it is a safe integer and a `bigint` beyond; any other literal (a fraction, however
 * close to an integer, or an integer too long for int64 written with an exponent) becomes an
 * `InexactNumber`, which no field accepts. Nothing is rounded behind the caller's back.
 */
export class InexactNumber {
  /**
   * `text`: the literal as sent; `canonical`: its exact value as `<digits>e<exponent>` with no
   * leading or trailing zero digits, so two literals of one value (1.5, 1.50, 15e-1) have one
   * canonical text (request fingerprints).
   */
  constructor(
    readonly text: string,
    readonly canonical: string = text,
  ) {}
  toString(): string {
    return this.text;
  }
}

/** A JSON number literal, split (lossless-json has checked its syntax). */
const NUMBER_PARTS = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Digits of the longest integer made exact here: int64 has 19, so 20 covers every overflow by one. */
const MAX_INTEGER_DIGITS = 20n;

function parseNumber(text: string): number | bigint | InexactNumber {
  if (isInteger(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  const parts = NUMBER_PARTS.exec(text);
  if (parts === null) return new InexactNumber(text);
  const [, sign, whole, fraction = '', exponent = '0'] = parts;
  // The value is sign × digits × 10^scale, read exactly from the text.
  const all = whole + fraction;
  let start = 0;
  while (start < all.length && all.charCodeAt(start) === 0x30) start++;
  if (start === all.length) return sign === '-' ? -0 : 0;
  let end = all.length;
  while (all.charCodeAt(end - 1) === 0x30) end--;
  const digits = all.slice(start, end);
  // BigInt: an exponent may have any number of digits.
  const scale = BigInt(exponent) - BigInt(fraction.length) + BigInt(all.length - end);
  return scale >= 0n && BigInt(digits.length) + scale <= MAX_INTEGER_DIGITS
    ? exactInteger(BigInt(`${sign}${digits}${'0'.repeat(Number(scale))}`))
    : new InexactNumber(text, `${sign}${digits}e${scale}`);
}

function exactInteger(n: bigint): number | bigint {
  return n >= MIN_SAFE && n <= MAX_SAFE ? Number(n) : n;
}

export class JsonSyntaxError extends Error {}

/** Thrown by parseJson and canonicalJson for a value nested deeper than their limit. */
export class JsonTooDeepError extends Error {}

/**
 * Deepest nesting of arrays and objects a request body may have. Every operation's body is one
 * level deep; the bound keeps every recursive walk of a body (the parser, class-transformer,
 * class-validator, the canonical form) far from the stack's limit.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether `text` opens more than `maxDepth` arrays or objects inside one another, counted
 * outside string literals in one pass over the text, before any parser walks it. Text that is
 * not JSON is left to the parser to refuse.
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  return scanJson(text, maxDepth) < 0;
}

/**
 * One pass over JSON text, outside string literals: -1 when it nests deeper than `maxDepth`,
 * else the number of object members it writes (each member has the one `:` outside strings).
 */
function scanJson(text: string, maxDepth: number): number {
  let depth = 0;
  let members = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x3a /* : */) members++;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > maxDepth) return -1;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return members;
}

/** Object members of a parsed value, nested ones included (InexactNumber is no JSON object). */
function countMembers(value: unknown): number {
  if (typeof value !== 'object' || value === null || value instanceof InexactNumber) return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) n += countMembers(value[i]);
    return n;
  }
  for (const key of Object.keys(value)) n += 1 + countMembers((value as Record<string, unknown>)[key]);
  return n;
}

/**
 * Parses JSON text losslessly. Throws JsonTooDeepError for text nested deeper than `maxDepth`
 * (checked before parsing), JsonSyntaxError for anything that is not one JSON value, duplicate
 * keys included. lossless-json refuses a key repeated with another value but keeps one with an
 * equal value (`{"a":7,"a":7.0}`); every duplicate is refused here by comparing the members the
 * text writes with those the value holds.
 */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  const members = scanJson(text, maxDepth);
  if (members < 0) throw new JsonTooDeepError(`JSON nested deeper than ${maxDepth}`);
  let value: unknown;
  try {
    value = parse(text, undefined, parseNumber);
  } catch (err) {
    // lossless-json reports syntax and duplicate keys; a pathologically deep document can
    // exhaust the stack (RangeError). Both are the client's malformed input.
    throw new JsonSyntaxError(err instanceof Error ? err.message : String(err));
  }
  if (members > 0 && countMembers(value) !== members) throw new JsonSyntaxError('an object repeats a key');
  return value;
}

/**
 * The service's one JSON writer (response bodies, error bodies, stored replays, the OpenAPI
 * document, request fingerprints). Writes `bigint` values as exact JSON numbers: the output of
 * lossless-json's `stringify`, which stays the reference (json-codec.spec.ts compares the two).
 *
 * Every response body passes through here, so the common case takes the shortest path: a body
 * of plain objects and arrays of strings, numbers, booleans and null (a page of Pets) is
 * written by the runtime's JSON.stringify, and one with bigints too where JSON.rawJSON exists.
 * Anything else goes through the writer below, which hands what it does not know (a Date, a
 * class instance, an object with toJSON) to lossless-json unchanged. An InexactNumber is
 * written as the number text it was parsed from.
 */
export function stringifyJson(value: unknown): string {
  // JSON.stringify writes a plain body in one native pass, cheaper than the writer below on
  // every response (bench scenario listPets). Bodies with int64 beyond 2^53 (bigint) take
  // JSON.rawJSON where the runtime has it (Node 22+), and the writer otherwise, as does anything else.
  const kind = declaredKind(value) ?? bodyKind(value, 0);
  if (kind === PLAIN) return (JSON.stringify(value) as string | undefined) ?? 'null';
  if (kind === WITH_BIGINT && rawJson) return (JSON.stringify(value, bigintAsRaw) as string | undefined) ?? 'null';
  // undefined, a function or a symbol at the top level has no JSON text.
  return writeValue(value, false, 0, Infinity) ?? 'null';
}

/** JSON.rawJSON (ES2024: Node 22 and later); undefined on Node 20. */
const rawJson = (JSON as { rawJSON?: (text: string) => unknown }).rawJSON;
const bigintAsRaw = (_key: string, v: unknown): unknown => (typeof v === 'bigint' ? rawJson!(v.toString()) : v);

const PLAIN = 0;
const WITH_BIGINT = 1;
const OTHER = 2;

const DECLARED_KIND = Symbol('animal-store.json-kind');

/**
 * Declares what bodyKind would find in `value`, so stringifyJson skips scanning it: plain
 * objects and arrays of strings, numbers, booleans and null, with bigints among them when
 * `withBigint`. For values the caller builds from known fields, such as a page of rows, whose
 * every object the scan would otherwise visit on every response (bench scenario listPets).
 */
export function declarePlainJson<T extends object>(value: T, withBigint: boolean): T {
  Object.defineProperty(value, DECLARED_KIND, { value: withBigint ? WITH_BIGINT : PLAIN });
  return value;
}

function declaredKind(value: unknown): number | undefined {
  return typeof value === 'object' && value !== null
    ? (value as { [DECLARED_KIND]?: number })[DECLARED_KIND]
    : undefined;
}

/** Beyond this depth a body is left to the writer (ours are two levels deep). */
const SCAN_DEPTH = 16;

/**
 * Whether JSON.stringify writes `value` exactly as the writer would: PLAIN for primitives
 * other than bigint, arrays and plain objects of them; WITH_BIGINT when bigints are the only
 * exception; OTHER for anything else (class instances, toJSON, functions, symbols, deep nesting).
 */
function bodyKind(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'undefined':
      return PLAIN;
    case 'bigint':
      return WITH_BIGINT;
    case 'object': {
      if (value === null) return PLAIN;
      if (depth >= SCAN_DEPTH) return OTHER;
      let kind = PLAIN;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const k = bodyKind(value[i], depth + 1);
          if (k === OTHER) return OTHER;
          kind |= k;
        }
        return kind;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return OTHER;
      // for…in: no array of keys per object; a plain object inherits no enumerable keys.
      for (const key in value) {
        const k = bodyKind((value as Record<string, unknown>)[key], depth + 1);
        if (k === OTHER) return OTHER;
        kind |= k;
      }
      return kind;
    }
    default:
      return OTHER;
  }
}

/**
 * The canonical text of a parsed JSON value (parseJson's output): the writer's, with object
 * keys sorted, so two bodies that mean the same JSON (key order, white space, `1.0` for `1`)
 * have the same text. Containers nested deeper than `maxDepth` throw JsonTooDeepError, which
 * keeps the recursion shallow whatever the parser accepted.
 */
export function canonicalJson(value: unknown, maxDepth: number): string {
  return writeValue(value, true, 0, maxDepth) ?? 'null';
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

/**
 * `sorted`: the canonical form, for values from parseJson only: keys in order, and every
 * object written by its own keys (the parser makes no class instances). Its keys come from
 * clients, so they bypass the cache of quoted keys.
 */
function writeValue(value: unknown, sorted: boolean, depth: number, maxDepth: number): string | undefined {
  if (depth > maxDepth) throw new JsonTooDeepError(`JSON nested deeper than ${maxDepth}`);
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
          out += writeValue(value[i], sorted, depth + 1, maxDepth) ?? 'null';
        }
        return `${out}]`;
      }
      if (value instanceof InexactNumber) return sorted ? value.canonical : value.text;
      if (!sorted) {
        const proto: unknown = Object.getPrototypeOf(value);
        if (
          (proto !== Object.prototype && proto !== null) ||
          typeof (value as { toJSON?: unknown }).toJSON === 'function'
        ) {
          return stringify(value);
        }
      }
      const keys = Object.keys(value);
      if (sorted) keys.sort();
      let out = '{';
      for (const key of keys) {
        const written = writeValue((value as Record<string, unknown>)[key], sorted, depth + 1, maxDepth);
        if (written === undefined) continue;
        const name = sorted ? `${writeString(key)}:` : quotedKey(key);
        out += out.length > 1 ? `,${name}${written}` : `${name}${written}`;
      }
      return `${out}}`;
    }
    default:
      return undefined;
  }
}
