import fc from 'fast-check';
import { int64 } from '../../test/support/arbitraries.js';
import { parseInt8 } from './pg-database.js';

describe('parseInt8', () => {
  it('gives every int64 exactly: a number while a double holds it, else a bigint (property)', () => {
    fc.assert(
      fc.property(int64, (value) => {
        const parsed = parseInt8(value.toString());
        expect(BigInt(parsed)).toBe(value);
        expect(typeof parsed).toBe(
          value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? 'number' : 'bigint',
        );
      }),
    );
    expect(parseInt8('9007199254740993')).toBe(9007199254740993n);
    expect(parseInt8('9223372036854775807')).toBe(9223372036854775807n);
  });
});
