import fc from 'fast-check';
import { stringify } from 'lossless-json';
import { InexactNumber, JsonSyntaxError, parseJson, stringifyJson } from './json-codec.js';

const INT64_MAX = 9223372036854775807n;
const int64 = fc.bigInt({ min: -INT64_MAX - 1n, max: INT64_MAX });

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

  it('pins the contract examples', () => {
    expect(parseJson('9223372036854775807')).toBe(9223372036854775807n);
    expect(parseJson('9007199254740993')).toBe(9007199254740993n);
    expect(stringifyJson({ a: 9007199254740993n })).toBe('{"a":9007199254740993}');
  });

  it('agrees with JSON.parse on documents without large integers', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const text = JSON.stringify(value);
        // Integral numbers beyond 2^53 are exactly where the codec must differ from JSON.parse.
        let unsafe = false;
        JSON.parse(text, (_k, v: unknown) => {
          if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) unsafe = true;
          return v;
        });
        fc.pre(!unsafe);
        expect(parseJson(text)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('never rounds: a fraction or exponent that a double cannot hold exactly stays inexact', () => {
    expect(parseJson('1e400')).toBeInstanceOf(InexactNumber);
    expect(parseJson('1e16')).toBeInstanceOf(InexactNumber);
    expect(parseJson('9007199254740993.0')).toBeInstanceOf(InexactNumber);
    expect(parseJson('1.5')).toBe(1.5);
    expect(parseJson('1e3')).toBe(1000);
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
    expect(() => parseJson('['.repeat(100_000))).toThrow(JsonSyntaxError);
  });

  it('keeps __proto__ as plain data, never as a prototype', () => {
    const v = parseJson('{"__proto__":{"polluted":1}}') as object;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
