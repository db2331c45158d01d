import fc from 'fast-check';
import { ApiError } from '../common/api-error.js';
import { parseJson } from '../common/json-codec.js';
import { canonicalJson, parseIdempotencyKey, requestFingerprint } from './idempotency-key.js';

/** JSON values as a client could send them (int64 as bigints, like the parser returns them). */
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
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

describe('Idempotency-Key header', () => {
  it('accepts 1 to 255 visible ASCII characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 255 }), (key) => {
        expect(parseIdempotencyKey(key)).toBe(key);
      }),
    );
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it('refuses anything else with 400 invalid_parameter naming the header', () => {
    const invalid = fc.oneof(
      fc.constant(''),
      fc.string({ minLength: 256, maxLength: 400 }).filter((s) => s.length > 255),
      fc.string().map((s) => `${s} ${s}`),
      fc.string({ unit: 'grapheme', minLength: 1 }).filter((s) => /[^\x21-\x7e]/.test(s)),
      fc.array(fc.string(), { minLength: 2, maxLength: 3 }),
    );
    fc.assert(
      fc.property(invalid, (header) => {
        let thrown: unknown;
        try {
          parseIdempotencyKey(header);
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(ApiError);
        expect(thrown).toMatchObject({ status: 400, code: 'invalid_parameter', details: [{ field: 'Idempotency-Key' }] });
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
    expect(canonicalJson(parseJson('{"__proto__":{"x":1},"constructor":2}'))).toBe('{"__proto__":{"x":1},"constructor":2}');
  });

  it('refuses a body nested deeper than any valid body with a 400', () => {
    const deep = parseJson(`${'['.repeat(200)}${']'.repeat(200)}`);
    expect(() => canonicalJson(deep)).toThrow(expect.objectContaining({ status: 400, code: 'validation_failed' }));
  });
});
