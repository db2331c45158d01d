import fc from 'fast-check';
import { INT64_MAX } from '../json/int64.js';
import { decodeCursor, encodeCursor } from './cursor.js';

describe('keyset cursor', () => {
  it('decodes what it encodes, for every positive int64', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: INT64_MAX }), (id) => {
        const c = encodeCursor(id);
        expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(decodeCursor(c)).toBe(id);
      }),
    );
  });

  it('refuses anything it did not issue', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        const id = decodeCursor(text);
        if (id !== null) expect(encodeCursor(id)).toBe(text);
      }),
    );
    expect(decodeCursor(Buffer.from('p1.0').toString('base64url'))).toBeNull();
    expect(decodeCursor(Buffer.from('p1.9223372036854775808').toString('base64url'))).toBeNull();
    expect(decodeCursor(Buffer.from('x1.5').toString('base64url'))).toBeNull();
    expect(decodeCursor('')).toBeNull();
  });
});
