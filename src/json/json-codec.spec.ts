import fc from 'fast-check';
import { stringify } from 'lossless-json';
import { int64, INT64_MAX } from '../../test/support/arbitraries.js';
import {
  canonicalJson,
  declarePlainJson,
  InexactNumber,
  JsonSyntaxError,
  JsonTooDeepError,
  MAX_JSON_DEPTH,
  nestsDeeperThan,
  parseJson,
  stringifyJson,
} from './json-codec.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The integer a JSON number literal is exactly, by rational arithmetic on its text; undefined for a fraction. */
function exactInteger(text: string): bigint | undefined {
  const [, sign, whole, fraction = '', exponent = '0'] = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  const exp = Number(exponent) - fraction.length;
  let numerator = BigInt(whole + fraction);
  let denominator = 1n;
  if (exp >= 0) numerator *= 10n ** BigInt(exp);
  else denominator = 10n ** BigInt(-exp);
  if (numerator % denominator !== 0n) return undefined;
  return (sign === '-' ? -1n : 1n) * (numerator / denominator);
}

describe('lossless JSON codec', () => {
  it('round-trips every int64 exactly, as a JSON number', () => {
    fc.assert(
      fc.property(int64, (n) => {
        const text = `{"id":${n}}`;
        const parsed = parseJson(text) as { id: number | bigint };
        expect(BigInt(parsed.id)).toBe(n);
        expect(stringifyJson(parsed)).toBe(text);
      }),
    );
  });

  it('keeps safe integers as numbers and unsafe ones as bigints', () => {
    fc.assert(
      fc.property(int64, (n) => {
        const v = parseJson(String(n));
        const safe = n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER);
        expect(typeof v).toBe(safe ? 'number' : 'bigint');
      }),
    );
  });

  it('writes exactly what lossless-json writes, for any value', () => {
    const reference = (value: unknown) => stringify(value) ?? 'null';
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withBoxedValues: true,
          withDate: true,
          withNullPrototype: true,
          withObjectString: true,
          withSparseArray: true,
          withUnicodeString: true,
        }),
        (value) => {
          expect(stringifyJson(value)).toBe(reference(value));
        },
      ),
      { numRuns: 1000 },
    );
    const pets = [
      { id: 1n, name: 'Rex "the dog" \\ \u2028 \ud83d\udc36 \ud800', categoryId: 9223372036854775807n, status: 'sold' },
    ];
    expect(stringifyJson(pets)).toBe(reference(pets));
    expect(
      stringifyJson({ a: undefined, b: () => 1, c: [undefined, Symbol('s')], d: new Date(0), e: 'x'.repeat(300) }),
    ).toBe(reference({ a: undefined, b: () => 1, c: [undefined, Symbol('s')], d: new Date(0), e: 'x'.repeat(300) }));
  });

  it('writes a declared page of rows exactly as lossless-json does, the declaration unseen', () => {
    const reference = (value: unknown) => stringify(value) ?? 'null';
    const id = fc.oneof(
      fc.integer({ min: 1 }),
      int64.filter((n) => n > 0n),
    );
    const row = fc.record({ id, name: fc.string({ unit: 'binary' }), categoryId: id, status: fc.string() });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 25 }), (rows) => {
        const withBigint = rows.some((r) => typeof r.id === 'bigint' || typeof r.categoryId === 'bigint');
        const declared = declarePlainJson([...rows], withBigint);
        expect(stringifyJson(declared)).toBe(reference(rows));
        expect(Object.keys(declared)).toEqual(Object.keys(rows));
      }),
      { numRuns: 500 },
    );
  });

  it('pins the examples of docs/api.md, "Identifiers (int64)"', () => {
    expect(parseJson('9223372036854775807')).toBe(9223372036854775807n);
    expect(parseJson('9007199254740993')).toBe(9007199254740993n);
    expect(stringifyJson({ a: 9007199254740993n })).toBe('{"a":9007199254740993}');
  });

  it('agrees with JSON.parse on documents whose numbers are safe integers', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const text = JSON.stringify(value);
        // Fractions and integers beyond 2^53 are exactly where the codec must differ from JSON.parse.
        let other = false;
        JSON.parse(text, (_k, v: unknown) => {
          if (typeof v === 'number' && !Number.isSafeInteger(v)) other = true;
          return v;
        });
        fc.pre(!other);
        expect(parseJson(text)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('never rounds: a literal is an integer only when its text is exactly one', () => {
    expect(parseJson('1e400')).toBeInstanceOf(InexactNumber);
    expect(parseJson('1e16')).toBe(10000000000000000n);
    expect(parseJson('9007199254740993.0')).toBe(9007199254740993n);
    expect(parseJson('9223372036854775807.000')).toBe(9223372036854775807n);
    expect(parseJson('1e3')).toBe(1000);
    expect(parseJson('7.000')).toBe(7);
    expect(parseJson('70e-1')).toBe(7);
    expect(parseJson('1.5')).toBeInstanceOf(InexactNumber);
    // Each of these is a double that is an integer, yet none of the texts is one.
    expect(parseJson('0.99999999999999999')).toBeInstanceOf(InexactNumber);
    expect(parseJson('7.000000000000000001')).toBeInstanceOf(InexactNumber);
    expect(parseJson('4503599627370496.4')).toBeInstanceOf(InexactNumber);
    expect(parseJson('1.00000000000000001')).toBeInstanceOf(InexactNumber);
  });

  it('reads every number literal exactly: its integer when the text is one, else an InexactNumber', () => {
    // Literals near integers and around the int64 and 2^53 edges, in every JSON spelling.
    const edge = fc.constantFrom(0n, 1n, MAX_SAFE, MAX_SAFE + 1n, 2n ** 52n, INT64_MAX, INT64_MAX + 1n, 2n ** 64n);
    const integer = fc.oneof(
      edge,
      int64,
      edge.map((n) => -n),
    );
    const literal = fc
      .record({
        n: integer,
        extraZeros: fc.nat(25),
        tail: fc.oneof(fc.constant(''), fc.stringMatching(/^[0-9]{0,3}[1-9]$/)),
        shift: fc.integer({ min: -4, max: 4 }),
        e: fc.constantFrom('e', 'E'),
      })
      .map(({ n, extraZeros, tail, shift, e }) => {
        // n, with zeros and maybe a non-zero tail after the point, the point moved by `shift`
        // and an exponent that moves it back: the value is n + 0.000…tail.
        const fraction = '0'.repeat(extraZeros) + tail;
        const digits = (n < 0n ? -n : n).toString() + fraction;
        const point = digits.length - fraction.length - shift;
        if (point <= 0 || point > digits.length) {
          return fraction === '' ? `${n}` : `${n}.${fraction}`;
        }
        const whole = digits.slice(0, point).replace(/^0+(?=[0-9])/, ''); // JSON allows no leading zero
        const mantissa = point === digits.length ? whole : `${whole}.${digits.slice(point)}`;
        return `${n < 0n ? '-' : ''}${mantissa}${shift === 0 ? '' : `${e}${shift}`}`;
      });
    fc.assert(
      fc.property(literal, (text) => {
        const exact = exactInteger(text);
        const value = parseJson(text);
        if (exact === undefined || exact > INT64_MAX * 2n || exact < -INT64_MAX * 2n) {
          if (exact === undefined) expect(value).toBeInstanceOf(InexactNumber);
          else expect(BigInt(value as bigint)).toBe(exact);
          return;
        }
        expect(typeof value === 'number' || typeof value === 'bigint').toBe(true);
        expect(BigInt(value as number)).toBe(exact);
        expect(typeof value).toBe(exact >= -MAX_SAFE && exact <= MAX_SAFE ? 'number' : 'bigint');
      }),
      { numRuns: 2000 },
    );
  });

  it('throws JsonSyntaxError, never anything else, for arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), (text) => {
        try {
          parseJson(text);
        } catch (err) {
          expect(err).toBeInstanceOf(JsonSyntaxError);
        }
      }),
    );
  });

  it('refuses duplicate keys and trailing data, and survives pathological nesting', () => {
    expect(() => parseJson('{"a":1,"a":2}')).toThrow(JsonSyntaxError);
    expect(() => parseJson('{} {}')).toThrow(JsonSyntaxError);
    expect(() => parseJson('['.repeat(100_000))).toThrow(JsonTooDeepError);
    expect(() => parseJson('['.repeat(100_000), Infinity)).toThrow(JsonSyntaxError);
  });

  it('refuses a repeated key whatever its values, at any depth, and nothing else', () => {
    expect(() => parseJson('{"name":"x","name":"x"}')).toThrow(JsonSyntaxError);
    expect(() => parseJson('{"categoryId":7,"categoryId":7.0}')).toThrow(JsonSyntaxError);
    expect(() => parseJson('[{"a":{"b":null,"b":null}}]')).toThrow(JsonSyntaxError);
    expect(parseJson('{"a":"b:c","b":{"a":1}}')).toEqual({ a: 'b:c', b: { a: 1 } });
    const member = fc.tuple(
      fc.constantFrom('a', 'b', '__proto__', ':', '\\"', 'a:b'),
      fc.constantFrom('1', '1.0', '"x"', '"a:b"', 'null', '{}', '{"a":1}', '[1,{"b":2}]'),
    );
    fc.assert(
      fc.property(fc.array(member, { maxLength: 5 }), fc.boolean(), (members, nested) => {
        const object = `{${members.map(([k, v]) => `"${k}":${v}`).join(',')}}`;
        const text = nested ? `{"outer":[${object}]}` : object;
        const repeated = new Set(members.map(([k]) => k)).size !== members.length;
        if (repeated) expect(() => parseJson(text)).toThrow(JsonSyntaxError);
        else expect(() => parseJson(text)).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });

  it('keeps __proto__ as plain data, never as a prototype', () => {
    const v = parseJson('{"__proto__":{"polluted":1}}') as object;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

/**
 * A plain reference writer of the canonical form: the fingerprints stored in idempotency_keys
 * hash this text, so canonicalJson must write exactly the same, or stored keys would stop matching.
 * (Only accepted bodies are stored, and their numbers are integers; an InexactNumber is written
 * as its exact value.)
 */
function previousCanonical(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : JSON.stringify(String(value));
    case 'bigint':
      return value.toString();
    case 'string':
      return JSON.stringify(value);
  }
  if (value instanceof InexactNumber) return value.canonical;
  if (Array.isArray(value)) return `[${value.map((v) => previousCanonical(v)).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${previousCanonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(String(value));
}

/** JSON text as clients send it: int64 and inexact number literals, any strings and keys. */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom('null', 'true', 'false', '1.0', '1e3', '-0', '1e400', '9007199254740993.0', '0.1'),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
    int64.map(String),
    fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s)),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc
      .uniqueArray(fc.tuple(fc.string({ unit: 'binary', maxLength: 6 }), tie('value')), {
        maxLength: 4,
        selector: ([k]) => k,
      })
      .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value;

describe('canonical JSON (request fingerprints)', () => {
  it('writes exactly what the fingerprints were computed with, for any parsed body', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const value = parseJson(text);
        expect(canonicalJson(value, 32)).toBe(previousCanonical(value));
      }),
      { numRuns: 1000 },
    );
    const body = parseJson('{"z":1,"a":{"y":[9223372036854775807,1e400,"\u2028\ud800"],"__proto__":2},"":null}');
    expect(canonicalJson(body, 32)).toBe(
      '{"":null,"a":{"__proto__":2,"y":[9223372036854775807,1e400,"\u2028\\ud800"]},"z":1}',
    );
  });

  it('refuses a value nested deeper than its limit, and only then', () => {
    const nested = (n: number) => parseJson(`${'['.repeat(n)}1${']'.repeat(n)}`, 100);
    expect(canonicalJson(nested(32), 32)).toBe(`${'['.repeat(32)}1${']'.repeat(32)}`);
    expect(() => canonicalJson(nested(33), 32)).toThrow(JsonTooDeepError);
    const empty = (n: number) => parseJson(`${'['.repeat(n)}${']'.repeat(n)}`, 100);
    expect(canonicalJson(empty(33), 32)).toBe(`${'['.repeat(33)}${']'.repeat(33)}`); // the innermost at depth 32
    expect(() => canonicalJson(empty(34), 32)).toThrow(JsonTooDeepError);
  });

  it('sorts keys for the canonical form only', () => {
    expect(canonicalJson(parseJson('{"b":1,"a":2}'), 32)).toBe('{"a":2,"b":1}');
    expect(stringifyJson(parseJson('{"b":1,"a":2}'))).toBe('{"b":1,"a":2}');
  });

  it('writes an inexact number as the literal it was parsed from', () => {
    expect(stringifyJson({ n: parseJson('1e400') })).toBe('{"n":1e400}');
  });

  it('gives one text to the literals of one value, and another to any other value', () => {
    const canonical = (text: string) => canonicalJson(parseJson(text), 32);
    expect(canonical('1.5')).toBe(canonical('15e-1'));
    expect(canonical('1.50')).toBe(canonical('0.15E1'));
    expect(canonical('7.0')).toBe(canonical('7'));
    expect(canonical('1.00000000000000001')).not.toBe(canonical('1'));
    expect(canonical('0.99999999999999999')).not.toBe(canonical('1'));
    expect(canonical('4503599627370496.4')).not.toBe(canonical('4503599627370496'));
  });
});

describe('nesting bound', () => {
  const depthOf = (v: unknown): number =>
    typeof v === 'object' && v !== null
      ? 1 + Math.max(0, ...Object.values(v as Record<string, unknown>).map(depthOf))
      : 0;

  it('measures the nesting of any JSON text as its value has it, strings and escapes included', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 10 }), (value, max) => {
        const text = JSON.stringify(value);
        expect(nestsDeeperThan(text, max)).toBe(depthOf(value) > max);
      }),
    );
    expect(nestsDeeperThan('"[[[\\"[[["', 1)).toBe(false);
  });

  it('refuses text nested deeper than the bound before parsing it, and parses what is within', () => {
    expect(() => parseJson(`{"name":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`)).toThrow(
      JsonTooDeepError,
    );
    expect(parseJson(`{"name":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`)).toEqual({
      name: expect.any(Array),
    });
    // Far beyond the stack's reach, unclosed or not: refused without recursion.
    expect(() => parseJson('['.repeat(200_000))).toThrow(JsonTooDeepError);
  });
});
