// fast-check arbitraries of the hostile requests the fuzz suites send to the pets API
// (test/robustness/fuzz.e2e-spec.ts): bodies, content types, query strings, path segments,
// methods and header values.
import fc from 'fast-check';
import { charIn, encodeAs, INT64_MAX, nested, pct } from './arbitraries.js';

/** Number literals: exact, huge, negative, fractional, exponents, and things that are not JSON. */
export const numberText = fc.oneof(
  fc.bigInt({ min: 1n, max: INT64_MAX }).map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.integer({ min: 1, max: 6000 }).map((n) => '9'.repeat(n)),
  fc.stringMatching(/^-?[0-9]{1,40}(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,5})?$/),
  fc.double().map(String),
  fc.constantFrom(
    '0',
    '-0',
    '1.0',
    '1e0',
    '1e400',
    '-1e400',
    '9223372036854775808',
    '-9223372036854775808',
    'NaN',
    'Infinity',
    '0x10',
    '01',
    '+1',
    '.5',
    '5.',
    '1_0',
  ),
);

/** Strings a careless or hostile client might send: control characters, lone surrogates, huge. */
export const nastyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.integer({ min: 200, max: 20_000 }).map((n) => 'x'.repeat(n)),
  fc.constantFrom(
    '',
    ' ',
    '\t\n',
    '\u0000',
    '\ud800',
    '\udfff',
    '\u202e',
    '\ufeff',
    'null',
    '__proto__',
    'constructor',
    'Rex',
  ),
);

/** A JSON value as text: from the generators above, or any JSON document. */
export const jsonValueText = fc.oneof(
  numberText,
  nastyString.map((s) => JSON.stringify(s)),
  fc.constantFrom('true', 'false', 'null', '[]', '{}', '{"polluted":true}', '{"prototype":{"polluted":true}}'),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
);

/**
 * A name of a field or a parameter: mostly one the route knows, often a lookalike or a dangerous
 * one (prototype pollution, case, brackets), sometimes any string up to `maxLength`.
 */
function nameOf(known: string[], hostile: string[], maxLength: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...known) },
    { weight: 2, arbitrary: fc.constantFrom(...hostile) },
    { weight: 1, arbitrary: fc.string({ maxLength }) },
  );
}

export const fieldName = nameOf(
  ['name', 'categoryId', 'status'],
  ['id', '__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'Name', ''],
  20,
);

/** Objects shaped like NewPet, with wrong, duplicate, missing and dangerous fields. */
export const petLikeText = fc
  .array(fc.tuple(fieldName, jsonValueText), { maxLength: 6 })
  .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`);

/** Valid bodies too, so the stack is fuzzed past validation (these are created: 201). */
export const validPetText = fc
  .record(
    {
      name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== ''),
      categoryId: fc.bigInt({ min: 1n, max: INT64_MAX }),
      status: fc.constantFrom('available', 'pending', 'sold'),
    },
    { requiredKeys: ['name', 'categoryId'] },
  )
  .map(
    (p) =>
      `{"name":${JSON.stringify(`fuzz ${p.name}`)},"categoryId":${p.categoryId}${p.status ? `,"status":"${p.status}"` : ''}}`,
  );

/** Nesting far beyond any valid body: arrays, objects, __proto__ chains, unclosed. */
export const deepText = fc
  .tuple(fc.integer({ min: 1, max: 12_000 }), fc.constantFrom('[', '{"a":', '{"__proto__":'), fc.boolean())
  .map(([n, open, closed]) => nested(open, n, '1', closed));

export const bodyBytes: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 5, arbitrary: petLikeText.map((t) => Buffer.from(t)) },
  { weight: 2, arbitrary: validPetText.map((t) => Buffer.from(t)) },
  {
    weight: 2,
    arbitrary: fc.jsonValue({ depthSize: 'large', maxDepth: 30 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
  },
  { weight: 2, arbitrary: deepText.map((t) => Buffer.from(t)) },
  { weight: 1, arbitrary: numberText.map((n) => Buffer.from(`{"name":"n","categoryId":${n}}`)) },
  // Invalid UTF-8 and random bytes, alone or spliced into a valid body.
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2000 }).map((a) => Buffer.from(a)) },
  {
    weight: 2,
    arbitrary: fc.tuple(validPetText, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 4 })).map(([t, at, bytes]) => {
      const b = Buffer.from(t);
      const i = at % (b.length + 1);
      return Buffer.concat([b.subarray(0, i), Buffer.from(bytes), b.subarray(i)]);
    }),
  },
  // Truncated and over-long bodies, a BOM, NULs.
  { weight: 1, arbitrary: fc.tuple(validPetText, fc.nat()).map(([t, n]) => Buffer.from(t.slice(0, n % t.length))) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 16 * 1024 - 64, max: 40_000 })
      .map((n) => Buffer.from(`{"name":"${'y'.repeat(n)}","categoryId":1}`)),
  },
  { weight: 1, arbitrary: validPetText.map((t) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(t)])) },
  { weight: 1, arbitrary: validPetText.map((t) => Buffer.from(t.replace('"n', '"\u0000n'))) },
);

export const anyContentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/JSON',
    'application/json;;',
    'application/json; charset=',
    'application/problem+json',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'text/plain',
    'text/json',
    '*/*',
    'json',
    '',
    'application/json, text/plain',
  ),
  fc.string({ unit: charIn(0x20, 0x7e), maxLength: 80 }),
);

/** Visible ASCII and Latin-1 text for header values (what an HTTP client lets through). */
export const headerText = (max: number) =>
  fc.oneof(
    fc.string({ unit: charIn(0x20, 0x7e), maxLength: max }),
    fc.string({ unit: charIn(0x20, 0xff), maxLength: max }),
  );

export const queryKey = nameOf(
  ['limit', 'status', 'cursor'],
  [
    'Limit',
    'limit[]',
    'limit[0]',
    'status[]',
    '__proto__',
    'constructor',
    '__proto__[polluted]',
    'constructor[prototype][polluted]',
    'a',
    '',
  ],
  12,
);
export const queryValue = fc.oneof(
  numberText,
  fc.constantFrom(
    'available',
    'pending',
    'sold',
    '',
    'Sold',
    ' available',
    'available,sold',
    '1',
    '20',
    '100',
    '101',
    '0',
  ),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/),
  nastyString,
);
export const queryTarget = fc
  .tuple(fc.array(fc.tuple(queryKey, queryValue, fc.nat(), fc.boolean()), { maxLength: 5 }), fc.boolean())
  .map(([pairs, trailing]) => {
    const qs = pairs
      .map(([k, v, mode, bare]) =>
        bare && v === '' ? encodeAs(k, mode) : `${encodeAs(k, mode)}=${encodeAs(v, mode + 1)}`,
      )
      .join('&');
    return `/v1/pets?${qs}${trailing ? '&' : ''}`;
  });

export const petIdSegment = fc.oneof(
  numberText.map((n) => pct(n)),
  fc.tuple(nastyString, fc.nat()).map(([s, mode]) => encodeAs(s, mode)),
  fc.constantFrom(
    '1',
    '0',
    '-1',
    '%',
    '%zz',
    '%00',
    '%C3%28',
    '..',
    '%2e%2e',
    '%2F',
    '1%2F2',
    '1;x=2',
    '1.0',
    '1e3',
    ' 1',
    '%201',
    '0x1',
    '１',
    '9223372036854775807',
    '9223372036854775808',
  ),
);

export const anyMethod = fc.constantFrom(
  'GET',
  'GET',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'HEAD',
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'FOO',
);
export const anyPath = fc.oneof(
  fc.constantFrom(
    '/v1/pets',
    '/v1/pets/',
    '/v1/pets/1',
    '/v1',
    '/v1/',
    '/',
    '/v2/pets',
    '/v1/pets/1/x',
    '/v1/store/orders',
    '/V1/PETS',
    '//v1//pets',
    '/v1/./pets',
    '/v1/../v1/pets',
    '/healthz?x=1',
    '/openapi.json',
    '/docs/x',
    '/metrics/x',
  ),
  fc.tuple(nastyString, fc.nat()).map(([s, mode]) => `/v1/${encodeAs(s, mode)}`),
);
