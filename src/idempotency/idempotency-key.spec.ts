import fc from 'fast-check';
import { charIn, int64 } from '../../test/support/arbitraries.js';
import { serializeItem } from 'structured-headers';
import { ApiError } from '../errors/api-error.js';
import { parseJson } from '../json/json-codec.js';
import { canonicalBody, parseIdempotencyKey, requestFingerprint } from './idempotency-key.js';

/** JSON values as a client could send them (int64 as bigints, like the parser returns them). */
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    int64,
    fc.string({ unit: 'grapheme' }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** The same JSON written another way: keys in another order, white space between tokens. */
function rewrite(value: unknown, shuffle: (keys: string[]) => string[]): string {
  if (Array.isArray(value)) return ` [ ${value.map((v) => rewrite(v, shuffle)).join(' , ')} ] `;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{ ${shuffle(Object.keys(o))
      .map((k) => `${JSON.stringify(k)} : ${rewrite(o[k], shuffle)}`)
      .join(', ')} }`;
  }
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value);
}

/** Keys as the service takes them: 1 to 255 visible ASCII characters. */
const validKey = fc.string({
  unit: charIn(0x21, 0x7e),
  minLength: 1,
  maxLength: 255,
});

/** The IETF draft's spelling of a key: an RFC 8941 sf-string, with \" and \\ escaped. */
const quoted = (key: string): string => `"${key.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

function refusal(header: string | string[]): unknown {
  try {
    parseIdempotencyKey(header);
  } catch (err) {
    return err;
  }
  return undefined;
}

const REFUSED = { status: 400, code: 'invalid_parameter', details: [{ field: 'Idempotency-Key' }] };

/** The 400 of a refused header, with the header beside it so a failure names it. */
function expectRefused(header: string | string[]): ApiError {
  const err = refusal(header);
  expect([header, err instanceof ApiError]).toEqual([header, true]);
  const { status, code, details } = err as ApiError;
  expect([header, { status, code, details: details?.map((d) => ({ field: d.field })) }]).toEqual([header, REFUSED]);
  return err as ApiError;
}

describe('Idempotency-Key header', () => {
  it('accepts a bare key of 1 to 255 visible ASCII characters as it is', () => {
    fc.assert(
      fc.property(
        validKey.filter((k) => !k.startsWith('"')),
        (key) => {
          expect(parseIdempotencyKey(key)).toBe(key);
        },
      ),
    );
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it('takes the quoted Structured Field string and the bare token as the same key (property)', () => {
    fc.assert(
      fc.property(validKey, (key) => {
        // Quoted by hand and by a Structured Fields library, with and without parameters.
        expect(parseIdempotencyKey(quoted(key))).toBe(key);
        expect(parseIdempotencyKey(serializeItem(key))).toBe(key);
        expect(parseIdempotencyKey(`${quoted(key)};v=1`)).toBe(key);
        if (!key.startsWith('"')) expect(parseIdempotencyKey(key)).toBe(parseIdempotencyKey(quoted(key)));
      }),
    );
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(parseIdempotencyKey('"a\\"b\\\\c"')).toBe('a"b\\c');
  });

  it('refuses a malformed quoted form with a 400 that says what a quoted key is', () => {
    for (const header of [
      '"abc', // unterminated
      '"a\\bc"', // an escape other than \" and \\
      '"abc"def', // text after the string
      '"a"b"',
      '"abc", "abc"', // sent twice
      '"abc";', // a parameter without a name
      '"\u00e9t\u00e9"', // not ASCII
      '"tab\there"',
      '"',
    ]) {
      expect(expectRefused(header).message).toMatch(/Structured Field string/);
    }
    // Well-formed strings that hold no key: empty, spaces, too long.
    for (const header of ['""', '" "', '"a b"', quoted('k'.repeat(256))]) {
      expectRefused(header);
    }
  });

  it('answers any header with a key or a 400, never another error (property)', () => {
    const header = fc.oneof(
      fc.string({ maxLength: 300 }).map((s) => `"${s}`),
      fc.string({ unit: 'binary', maxLength: 300 }),
      validKey.map(quoted).chain((q) => fc.nat(q.length).map((i) => q.slice(0, i) + q.slice(i + 1))),
    );
    fc.assert(
      fc.property(header, (h) => {
        if (refusal(h) === undefined) expect(parseIdempotencyKey(h)).toMatch(/^[\x21-\x7e]{1,255}$/);
        else expectRefused(h);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses anything else with 400 invalid_parameter naming the header', () => {
    const invalid = fc.oneof(
      fc.constant(''),
      fc.string({ minLength: 256, maxLength: 400 }).filter((s) => s.length > 255 && !s.startsWith('"')),
      fc.string().map((s) => `x${s} ${s}`),
      fc.string({ unit: 'grapheme', minLength: 1 }).filter((s) => /[^\x21-\x7e]/.test(s) && !s.startsWith('"')),
      fc.string({ minLength: 1025, maxLength: 1100 }).map((s) => `"${s}"`),
      fc.array(fc.string(), { minLength: 2, maxLength: 3 }),
    );
    fc.assert(
      fc.property(invalid, (header) => {
        expectRefused(header);
      }),
    );
  });
});

describe('request fingerprint', () => {
  it('is the same for the same JSON however it is written', () => {
    fc.assert(
      fc.property(jsonValue, fc.func(fc.integer()), (value, rank) => {
        const a = rewrite(value, (keys) => keys);
        const b = rewrite(value, (keys) => [...keys].sort((x, y) => rank(x) - rank(y) || (x < y ? -1 : 1)));
        expect(requestFingerprint('createPet', parseJson(a))).toBe(requestFingerprint('createPet', parseJson(b)));
      }),
    );
  });

  it('differs when a value, a key, the nesting or the operation differs', () => {
    const fp = (text: string, op = 'createPet') => requestFingerprint(op, parseJson(text));
    const base = fp('{"name":"Rex","categoryId":1}');
    expect(fp('{"categoryId":1,"name":"Rex"}')).toBe(base);
    expect(fp('{"name":"Rex","categoryId":1.0}')).toBe(base); // the same number
    for (const other of [
      '{"name":"Rex","categoryId":2}',
      '{"name":"Rex ","categoryId":1}',
      '{"name":"Rex","categoryId":"1"}',
      '{"name":"Rex","categoryId":1,"status":"available"}',
      '{"name":"Rex","categoryid":1}',
      '[{"name":"Rex","categoryId":1}]',
      '{"name":"Rex","categoryId":9223372036854775807}',
    ]) {
      expect(fp(other)).not.toBe(base);
    }
    expect(fp('{"name":"Rex","categoryId":1}', 'another')).not.toBe(base);
    expect(fp('{"a":9007199254740993}')).not.toBe(fp('{"a":9007199254740992}'));
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps __proto__ and constructor keys as data', () => {
    expect(canonicalBody(parseJson('{"__proto__":{"x":1},"constructor":2}'))).toBe(
      '{"__proto__":{"x":1},"constructor":2}',
    );
  });

  it('refuses a body nested deeper than any valid body with a 400', () => {
    const deep = parseJson(`${'['.repeat(200)}${']'.repeat(200)}`, 1000);
    expect(() => canonicalBody(deep)).toThrow(expect.objectContaining({ status: 400, code: 'validation_failed' }));
  });
});
