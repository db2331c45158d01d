import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { parseGithubPublicKeys } from './github-public-keys.js';

const pem = (options: Parameters<typeof generateKeyPairSync>[1], type: 'ec' | 'rsa' = 'ec') =>
  generateKeyPairSync(type as 'ec', options as { namedCurve: string })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();
const p256 = pem({ namedCurve: 'prime256v1' });

describe('parseGithubPublicKeys (the file SECRET_SCANNING_GITHUB_KEYS names)', () => {
  it("reads GitHub's format: keys by identifier, with whether each is current", () => {
    const keys = parseGithubPublicKeys(
      JSON.stringify({
        public_keys: [
          { key_identifier: 'a', key: p256, is_current: true },
          { key_identifier: 'b', key: p256, is_current: false },
        ],
      }),
    );
    expect([...keys].map(([id, k]) => [id, k.current, k.key.asymmetricKeyDetails?.namedCurve])).toEqual([
      ['a', true, 'prime256v1'],
      ['b', false, 'prime256v1'],
    ]);
  });

  it.each([
    ['not JSON', 'public_keys', /not JSON/],
    ['no keys', JSON.stringify({ public_keys: [] }), /1 to 100 keys/],
    [
      'a key that is no PEM',
      JSON.stringify({ public_keys: [{ key_identifier: 'a', key: 'x', is_current: true }] }),
      /not a PEM/,
    ],
    [
      'a key on another curve',
      JSON.stringify({
        public_keys: [{ key_identifier: 'a', key: pem({ namedCurve: 'secp384r1' }), is_current: true }],
      }),
      /not an ECDSA P-256/,
    ],
    ['no is_current', JSON.stringify({ public_keys: [{ key_identifier: 'a', key: p256 }] }), /is_current/],
    [
      'a repeated identifier',
      JSON.stringify({
        public_keys: [
          { key_identifier: 'a', key: p256, is_current: true },
          { key_identifier: 'a', key: p256, is_current: false },
        ],
      }),
      /repeats a/,
    ],
  ])('refuses %s, saying what is wrong', (_what, text, message) => {
    expect(() => parseGithubPublicKeys(text)).toThrow(message);
  });

  it('refuses any other JSON with an Error, never another failure', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(() => parseGithubPublicKeys(JSON.stringify(value))).toThrow(Error);
      }),
    );
  });
});
