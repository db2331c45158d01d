import fc from 'fast-check';
import {
  ADMIN_TOKEN_LENGTH,
  adminTokenDisplayPrefix,
  generateAdminToken,
  isAdminTokenShaped,
} from './admin-token-format.js';
import { apiKeyVersion, generateApiKey } from '../api-keys/api-key-format.js';

const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((a) => Buffer.from(a));
const tokenFrom = (b: Buffer) => generateAdminToken(() => b);
const SECRET = 's'.repeat(32);

describe('admin token format', () => {
  it('is asadm_ + 49 base62 characters, with 256 random bits, and shows 14 characters in listings', () => {
    const token = generateAdminToken();
    expect(token).toMatch(/^asadm_[0-9A-Za-z]{49}$/);
    expect(token).toHaveLength(ADMIN_TOKEN_LENGTH);
    expect(isAdminTokenShaped(token)).toBe(true);
    expect(generateAdminToken()).not.toBe(token);
    expect(adminTokenDisplayPrefix(token)).toBe(token.slice(0, 14));
    expect(isAdminTokenShaped(tokenFrom(Buffer.alloc(32, 0)))).toBe(true);
    expect(isAdminTokenShaped(tokenFrom(Buffer.alloc(32, 0xff)))).toBe(true);
  });

  it('every generated token checks, and any single-character change fails the check (property)', () => {
    fc.assert(
      fc.property(bytes32, fc.nat(), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme-ascii' }), (b, at, ch) => {
        const token = tokenFrom(b);
        expect(isAdminTokenShaped(token)).toBe(true);
        const i = at % token.length;
        fc.pre(token[i] !== ch);
        expect(isAdminTokenShaped(token.slice(0, i) + ch + token.slice(i + 1))).toBe(false);
      }),
    );
  });

  it('never takes an API key of either version for an admin token, nor an admin token for an API key (property)', () => {
    fc.assert(
      fc.property(bytes32, (b) => {
        expect(isAdminTokenShaped(generateApiKey(undefined, () => b))).toBe(false);
        expect(isAdminTokenShaped(generateApiKey(SECRET, () => b))).toBe(false);
        const token = tokenFrom(b);
        expect(apiKeyVersion(token)).toBeNull();
        expect(apiKeyVersion(token, SECRET)).toBeNull();
      }),
    );
  });

  it('refuses any string that is not a token it could have issued (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        fc.pre(!/^asadm_[0-9A-Za-z]{49}$/.test(text));
        expect(isAdminTokenShaped(text)).toBe(false);
      }),
    );
  });
});
