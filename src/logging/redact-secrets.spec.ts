import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { generateAdminToken } from '../admin-tokens/admin-token-format.js';
import { API_KEY_PREFIX, API_KEY_V2_PREFIX, generateApiKey } from '../api-keys/api-key-format.js';
import { ADMIN_TOKEN_PREFIX } from '../admin-tokens/admin-token-format.js';
import { containsSecret, MIN_BODY_CHARS, redactSecrets, REDACTED, SECRET_FORMATS } from './redact-secrets.js';

/** Secrets as the service issues them (the generators of src/auth), and a Standard Webhooks secret. */
const secrets = fc.oneof(
  fc.constant(null).map(() => generateApiKey()),
  fc.constant(null).map(() => generateApiKey('checksum-secret-0123456789abcdef')),
  fc.constant(null).map(() => generateAdminToken()),
  fc.integer({ min: 24, max: 64 }).map((n) => `whsec_${randomBytes(n).toString('base64')}`),
);

/** How one character is sent: raw, percent-encoded in upper, lower or mixed case hex, or encoded twice. */
const encodings = fc.constantFrom('raw', 'upper', 'lower', 'mixed', 'twice');
function encodeChar(c: string, how: string): string {
  const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
  switch (how) {
    case 'upper':
      return `%${hex.toUpperCase()}`;
    case 'lower':
      return `%${hex.toLowerCase()}`;
    case 'mixed':
      return `%${hex[0].toLowerCase()}${hex[1].toUpperCase()}`;
    case 'twice':
      return `%25${hex.toUpperCase()}`;
    default:
      return c;
  }
}

/** A secret sent in one of the ways a client might: raw, fully encoded, or some characters encoded. */
const sentSecrets = fc
  .tuple(secrets, fc.constantFrom('raw', 'all', 'some'), encodings, fc.array(encodings, { minLength: 1 }))
  .map(([secret, mode, one, mix]) => ({
    secret,
    sent: [...secret]
      .map((c, i) => encodeChar(c, mode === 'raw' ? 'raw' : mode === 'all' ? one : mix[i % mix.length]))
      .join(''),
  }));

/** Percent-decoding that never throws (a stray `%` stays), applied twice for doubly encoded text. */
function decodeLoosely(text: string): string {
  const once = (t: string) => t.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  return once(once(text));
}

/** Whether any 10 consecutive characters of the secret's body are still in `text`. */
function bodySurvives(secret: string, text: string): boolean {
  const body = secret.slice(secret.indexOf('_') + 1);
  const plain = decodeLoosely(text);
  for (let i = 0; i + 10 <= body.length; i++) if (plain.includes(body.slice(i, i + 10))) return true;
  return false;
}

/** Text around a secret: anything, or URL-like pieces that end where a secret is usually put. */
const surroundings = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('/v1/pets/', '?api_key=', '&access_token=', 'Bearer ', '"', 'x', '%', 'ask', '/', ''),
);

describe('redactSecrets', () => {
  it('knows the prefixes of the API keys and admin tokens of src/auth', () => {
    expect(SECRET_FORMATS.map((f) => f.prefix)).toEqual(
      expect.arrayContaining([API_KEY_PREFIX, API_KEY_V2_PREFIX, ADMIN_TOKEN_PREFIX, 'whsec_']),
    );
  });

  it('leaves no part of a secret in any position, raw or percent-encoded in any case, and says which kind it was', () => {
    fc.assert(
      fc.property(surroundings, sentSecrets, surroundings, (before, { secret, sent }, after) => {
        const redacted = redactSecrets(before + sent + after);
        expect(bodySurvives(secret, redacted)).toBe(false);
        const prefix = secret.slice(0, secret.indexOf('_') + 1);
        expect(redacted).toContain(`${prefix}${REDACTED}`);
        expect(containsSecret(before + sent + after)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('redacts every secret of a text, not only the first', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(surroundings, sentSecrets), { minLength: 2, maxLength: 5 }), (parts) => {
        const redacted = redactSecrets(parts.map(([text, { sent }]) => text + sent).join(''));
        for (const [, { secret }] of parts) expect(bodySurvives(secret, redacted)).toBe(false);
      }),
    );
  });

  it('leaves text without a secret shape as it is', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        fc.pre(!containsSecret(text));
        expect(redactSecrets(text)).toBe(text);
      }),
    );
    for (const text of [
      '/v1/pets?limit=20&cursor=eyJpZCI6IjEyMyJ9',
      '/v1/pets?ask_id=1&task_list=abc',
      `/v1/pets/ask_${'a'.repeat(MIN_BODY_CHARS - 1)}`,
      'ASK_ABCDEFGHIJKLMNOPQRSTUVWXYZ',
      '/v1/pets/123?whsec_=short',
    ]) {
      expect(redactSecrets(text)).toBe(text);
      expect(containsSecret(text)).toBe(false);
    }
  });

  it('writes the prefix and the marker in place of the secret, keeping the rest of the line', () => {
    const key = generateApiKey();
    expect(redactSecrets(`/v1/pets/${key}?api_key=${key}&limit=5`)).toBe(
      `/v1/pets/ask_${REDACTED}?api_key=ask_${REDACTED}&limit=5`,
    );
    const token = generateAdminToken();
    expect(redactSecrets(`/v1/pets?access_token=asadm%5F${token.slice(6)}`)).toBe(
      `/v1/pets?access_token=asadm_${REDACTED}`,
    );
    expect(redactSecrets('secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+/== end')).toBe(`secret whsec_${REDACTED} end`);
  });
});
