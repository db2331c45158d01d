import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import {
  API_KEY_LENGTH,
  API_KEY_PREFIX,
  API_KEY_V2_LENGTH,
  API_KEY_V2_PREFIX,
  apiKeyVersion,
  base62,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  hashesEqual,
} from './api-key-format.js';

const isWellFormedApiKey = (text: string): boolean => apiKeyVersion(text) === 1;
const SECRET = 's'.repeat(32);

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const bytes32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((a) => Buffer.from(a));
const keyFrom = (b: Buffer) => generateApiKey(undefined, () => b);
const keyV2From = (b: Buffer, secret = SECRET) => generateApiKey(secret, () => b);

describe('API key format, version 1', () => {
  it('is ask_ + 49 base62 characters, with 256 random bits', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^ask_[0-9A-Za-z]{49}$/);
    expect(key).toHaveLength(API_KEY_LENGTH);
    expect(isWellFormedApiKey(key)).toBe(true);
    expect(generateApiKey()).not.toBe(key);
  });

  it('encodes the extremes of the random part at full width', () => {
    const zeros = keyFrom(Buffer.alloc(32, 0));
    const ones = keyFrom(Buffer.alloc(32, 0xff));
    expect(zeros.slice(4, 47)).toBe('0'.repeat(43));
    expect(isWellFormedApiKey(zeros)).toBe(true);
    expect(isWellFormedApiKey(ones)).toBe(true);
    expect(ones).toHaveLength(API_KEY_LENGTH);
  });

  it('base62 is fixed-width and refuses values too wide', () => {
    expect(base62(0n, 3)).toBe('000');
    expect(base62(61n, 2)).toBe('0z');
    expect(base62(62n, 2)).toBe('10');
    expect(() => base62(62n ** 2n, 2)).toThrow(RangeError);
  });

  it('every generated key is well formed and distinct bytes give distinct keys (property)', () => {
    fc.assert(
      fc.property(bytes32, bytes32, (a, b) => {
        const ka = keyFrom(a);
        expect(isWellFormedApiKey(ka)).toBe(true);
        expect(ka.startsWith(API_KEY_PREFIX)).toBe(true);
        expect(ka === keyFrom(b)).toBe(a.equals(b));
      }),
    );
  });

  it('any single-character change to a valid key fails the check (property)', () => {
    fc.assert(
      fc.property(bytes32, fc.nat(), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme-ascii' }), (b, at, ch) => {
        const key = keyFrom(b);
        const i = at % key.length;
        fc.pre(key[i] !== ch);
        const changed = key.slice(0, i) + ch + key.slice(i + 1);
        expect(isWellFormedApiKey(changed)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('any change of one base62 character, checksum included, fails the check (exhaustive for one key)', () => {
    const key = generateApiKey();
    for (let i = API_KEY_PREFIX.length; i < key.length; i++) {
      for (const ch of ALPHABET) {
        if (ch === key[i]) continue;
        expect(isWellFormedApiKey(key.slice(0, i) + ch + key.slice(i + 1))).toBe(false);
      }
    }
  });

  it('swapping two adjacent different characters fails the check (property)', () => {
    fc.assert(
      fc.property(bytes32, fc.nat(), (b, at) => {
        const key = keyFrom(b);
        const i = API_KEY_PREFIX.length + (at % (key.length - API_KEY_PREFIX.length - 1));
        fc.pre(key[i] !== key[i + 1]);
        expect(isWellFormedApiKey(key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2))).toBe(false);
      }),
    );
  });

  it('refuses truncated, extended, re-cased and foreign strings without throwing (property)', () => {
    const key = generateApiKey();
    for (const bad of [
      '',
      key.slice(0, -1),
      `${key}x`,
      ` ${key}`,
      key.toUpperCase(),
      `ASK_${key.slice(4)}`,
      `ghp_${key.slice(4)}`,
      key.replace(/^ask_/, 'ask-'),
    ]) {
      expect(isWellFormedApiKey(bad)).toBe(false);
    }
    fc.assert(fc.property(fc.string({ maxLength: 80 }), (s) => expect(isWellFormedApiKey(s)).toBe(false)));
  });

  it('shows only a short display prefix', () => {
    const key = generateApiKey();
    expect(displayPrefix(key)).toBe(key.slice(0, 12));
  });
});

describe('API key hashing', () => {
  const key = generateApiKey();

  it('is SHA-256 hex without a pepper and HMAC-SHA256 hex with one', () => {
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    const pepper = 'p'.repeat(32);
    expect(hashApiKey(key, pepper)).toBe(createHmac('sha256', pepper).update(key).digest('hex'));
    expect(hashApiKey(key, pepper)).not.toBe(hashApiKey(key));
    expect(hashApiKey(key)).not.toContain(key.slice(4, 20));
  });

  it('compares hashes in constant time, refusing anything not 32 bytes', () => {
    const h = hashApiKey(key);
    expect(hashesEqual(h, hashApiKey(key))).toBe(true);
    expect(hashesEqual(h, hashApiKey(generateApiKey()))).toBe(false);
    expect(hashesEqual(h, h.slice(0, 62))).toBe(false);
    expect(hashesEqual('', '')).toBe(false);
    expect(hashesEqual(h, 'zz'.repeat(32))).toBe(false);
  });
});

describe('API key format, version 2 (HMAC tag)', () => {
  it('is ask2_ + 65 base62 characters, and verifies only with the secret that signed it', () => {
    const key = generateApiKey(SECRET);
    expect(key).toMatch(/^ask2_[0-9A-Za-z]{65}$/);
    expect(key).toHaveLength(API_KEY_V2_LENGTH);
    expect(apiKeyVersion(key, SECRET)).toBe(2);
    expect(apiKeyVersion(key, 't'.repeat(32))).toBeNull();
    expect(apiKeyVersion(key)).toBeNull();
    expect(displayPrefix(key)).toBe(key.slice(0, 13));
    expect(key.startsWith(API_KEY_V2_PREFIX)).toBe(true);
  });

  it('keys of both versions are told apart: neither pattern matches the other (secret scanners)', () => {
    const v1 = /^ask_[0-9A-Za-z]{49}$/;
    const v2 = /^ask2_[0-9A-Za-z]{65}$/;
    fc.assert(
      fc.property(bytes32, (b) => {
        expect(v1.test(keyFrom(b))).toBe(true);
        expect(v2.test(keyFrom(b))).toBe(false);
        expect(v2.test(keyV2From(b))).toBe(true);
        expect(v1.test(keyV2From(b))).toBe(false);
        expect(apiKeyVersion(keyFrom(b), SECRET)).toBe(1);
      }),
    );
  });

  it('any single-character change to a version 2 key fails its tag (property)', () => {
    fc.assert(
      fc.property(bytes32, fc.nat(), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme-ascii' }), (b, at, ch) => {
        const key = keyV2From(b);
        const i = at % key.length;
        fc.pre(key[i] !== ch);
        expect(apiKeyVersion(key.slice(0, i) + ch + key.slice(i + 1), SECRET)).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  it('a forger without the secret gets nothing past the tag: random tags and re-signed bodies fail (property)', () => {
    fc.assert(
      fc.property(bytes32, fc.string({ minLength: 32, maxLength: 40 }), (b, other) => {
        fc.pre(other !== SECRET);
        expect(apiKeyVersion(keyV2From(b, other), SECRET)).toBeNull();
        const body = keyV2From(b).slice(0, API_KEY_V2_LENGTH - 22);
        expect(apiKeyVersion(body + base62(BigInt(`0x${b.subarray(0, 16).toString('hex')}`), 22), SECRET)).toBeNull();
      }),
    );
  });

  it('refuses any string that is not a signed key without throwing (property)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 90 }), (s) => expect(apiKeyVersion(s, SECRET)).toBeNull()));
    fc.assert(
      fc.property(fc.string({ minLength: 65, maxLength: 65, unit: fc.constantFrom(...ALPHABET) }), (s) =>
        expect(apiKeyVersion(`ask2_${s}`, SECRET)).toBeNull(),
      ),
    );
  });
});
