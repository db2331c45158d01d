import fc from 'fast-check';
import { INT64_MAX, parsePositiveInt64, toPositiveInt64 } from './int64.js';

describe('int64 identifiers', () => {
  it('accepts the canonical decimal of every positive int64', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: INT64_MAX }), (n) => {
        expect(parsePositiveInt64(n.toString())).toBe(n);
      }),
    );
  });

  it('refuses zero, negatives, overflow, leading zeros, signs, spaces and fractions', () => {
    for (const text of [
      '0',
      '-1',
      '9223372036854775808',
      '99999999999999999999',
      '01',
      '+1',
      ' 1',
      '1 ',
      '1.0',
      '1e3',
      '',
      'abc',
    ]) {
      expect(parsePositiveInt64(text)).toBeNull();
    }
  });

  it('refuses any text that is not a canonical positive decimal', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 24 }), (text) => {
        const v = parsePositiveInt64(text);
        if (v !== null) expect(v.toString()).toBe(text);
      }),
    );
  });

  it('takes JSON values only as safe integer numbers or in-range bigints', () => {
    expect(toPositiveInt64(1)).toBe(1n);
    expect(toPositiveInt64(INT64_MAX)).toBe(INT64_MAX);
    for (const v of [
      0,
      -1,
      1.5,
      Number.MAX_SAFE_INTEGER + 1,
      '5',
      true,
      null,
      undefined,
      INT64_MAX + 1n,
      0n,
      [1],
      { a: 1 },
    ]) {
      expect(toPositiveInt64(v)).toBeNull();
    }
  });
});
