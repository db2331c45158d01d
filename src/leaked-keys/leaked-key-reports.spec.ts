import fc from 'fast-check';
import { generateApiKey } from '../api-keys/api-key-format.js';
import { ApiError } from '../errors/api-error.js';
import { MAX_REPORTED_SECRETS, parseGithubReport, reportedKeys, tokenHash } from './leaked-key-reports.js';

const SECRET = 'leaked-key-reports-spec-secret-0123456789';
const keys = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? generateApiKey(SECRET) : generateApiKey()));

describe('reportedKeys', () => {
  it('keeps exactly the keys this service could have issued, each once, in the order first seen', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...keys), fc.string(), fc.string({ unit: 'binary' }))),
        (strings) => {
          const kept = reportedKeys(strings, SECRET);
          const expected = [...new Set(strings.filter((s) => keys.includes(s)))];
          expect(kept).toEqual(expected);
        },
      ),
    );
  });

  it('drops a key with any one character changed (its checksum or tag no longer matches)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.nat(), fc.constantFrom(...'0123456789ABCDEFabcdef'), (key, at, ch) => {
        const i = 5 + (at % (key.length - 5));
        const changed = key.slice(0, i) + ch + key.slice(i + 1);
        fc.pre(changed !== key);
        expect(reportedKeys([changed], SECRET)).toEqual([]);
      }),
    );
  });

  it('drops version 2 keys when no checksum secret is configured', () => {
    expect(reportedKeys(keys, undefined)).toEqual(keys.filter((k) => k.startsWith('ask_')));
  });

  it('hashes a token as GitHub names it: SHA-256 hex', () => {
    expect(tokenHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('parseGithubReport', () => {
  const entry = fc.record(
    {
      token: fc.string(),
      type: fc.string({ maxLength: 50 }),
      url: fc.webUrl(),
      source: fc.constantFrom('content', 'commit', 'pull_request'),
      extra: fc.jsonValue(),
    },
    { requiredKeys: ['token'] },
  );

  it('accepts every array of matches, keeping token, type, url and source and ignoring other fields', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 20 }), (entries) => {
        const parsed = parseGithubReport(entries);
        expect(parsed).toEqual(
          entries.map(({ token, type, url, source }) => ({
            token,
            ...(type === undefined ? {} : { type }),
            ...(url === undefined ? {} : { url }),
            ...(source === undefined ? {} : { source }),
          })),
        );
      }),
    );
  });

  it('answers any other JSON with a 400 validation_failed naming the field, never another failure', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          parseGithubReport(value);
        } catch (err) {
          expect(err).toBeInstanceOf(ApiError);
          expect((err as ApiError).status).toBe(400);
          expect((err as ApiError).code).toBe('validation_failed');
          expect((err as ApiError).details?.[0].field).toMatch(/^(body|\[\d+\](\.\w+)?)$/);
        }
      }),
    );
  });

  it('refuses more than 1,000 matches, and an inherited __proto__ token', () => {
    expect(() => parseGithubReport(Array.from({ length: MAX_REPORTED_SECRETS + 1 }, () => ({ token: 'x' })))).toThrow(
      /at most 1000/,
    );
    expect(() => parseGithubReport([JSON.parse('{"__proto__": {"token": "x"}}')])).toThrow(/token must be a string/);
  });
});
