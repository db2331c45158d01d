import fc from 'fast-check';
import type { IncomingMessage } from 'node:http';
import { headRefusal, literalTarget, MAX_HEADER_FIELDS } from './request-limits.js';

/** A request head as Node hands it over: raw name/value pairs, the joined headers, the version. */
function head(pairs: [string, string][], httpVersion = '1.1'): IncomingMessage {
  const headers: Record<string, string> = {};
  for (const [name, value] of pairs) headers[name.toLowerCase()] ??= value;
  return { rawHeaders: pairs.flat(), headers, httpVersion } as unknown as IncomingMessage;
}

const filler = fc.integer({ min: 0, max: 10_000 }).map((i): [string, string] => [`X-Filler-${i}`, 'x']);
const caseOf = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));

describe('limits of a request head', () => {
  it(`refuses more than ${MAX_HEADER_FIELDS} header fields with 431, and accepts up to that many`, () => {
    fc.assert(
      fc.property(fc.integer({ min: MAX_HEADER_FIELDS - 5, max: 2 * MAX_HEADER_FIELDS + 2000 }), (count) => {
        const pairs: [string, string][] = [['Host', 'h']];
        for (let i = 1; i < count; i++) pairs.push([`X-Filler-${i}`, 'x']);
        const refusal = headRefusal(head(pairs));
        if (count > MAX_HEADER_FIELDS) expect(refusal).toMatchObject({ status: 431, code: 'headers_too_large' });
        else expect(refusal).toBeUndefined();
      }),
    );
  });

  it('refuses Host, Authorization, Content-Type or Content-Length given twice, in any case', () => {
    const single = fc.constantFrom('host', 'authorization', 'content-type', 'content-length');
    fc.assert(
      fc.property(
        single.chain((name) => fc.tuple(fc.constant(name), caseOf(name), caseOf(name))),
        fc.array(filler, { maxLength: 20 }),
        fc.nat(20),
        ([name, first, second], others, at) => {
          const pairs: [string, string][] = [...others];
          if (name !== 'host') pairs.unshift(['Host', 'h']);
          pairs.splice(Math.min(at, pairs.length), 0, [first, 'a'], [second, 'a']);
          expect(headRefusal(head(pairs))).toMatchObject({
            status: 400,
            code: 'validation_failed',
            details: [{ field: name, message: 'given more than once' }],
          });
        },
      ),
    );
    expect(
      headRefusal(
        head([
          ['Host', 'h'],
          ['Authorization', 'Bearer a'],
          ['X-Authorization', 'b'],
        ]),
      ),
    ).toBeUndefined();
  });

  it('wants Host on HTTP/1.1 only', () => {
    expect(headRefusal(head([['Accept', '*/*']]))).toMatchObject({ status: 400, details: [{ field: 'host' }] });
    expect(headRefusal(head([['Accept', '*/*']], '1.0'))).toBeUndefined();
  });

  it('refuses every transfer coding but chunked alone: 400 when the length is unknown, else 501', () => {
    const token = fc.oneof(
      fc.constantFrom('chunked', 'gzip', 'deflate', 'identity', 'Chunked'),
      fc.stringMatching(/^[a-z-]{1,8}$/),
    );
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 4 }), fc.constantFrom(',', ', ', ' ,'), (codings, sep) => {
        const refusal = headRefusal(
          head([
            ['Host', 'h'],
            ['Transfer-Encoding', codings.join(sep)],
          ]),
        );
        const chunked = codings.map((c) => c.toLowerCase() === 'chunked');
        if (codings.length === 1 && chunked[0]) expect(refusal).toBeUndefined();
        else if (!chunked[chunked.length - 1] || chunked.slice(0, -1).some(Boolean))
          expect(refusal).toMatchObject({ status: 400, code: 'validation_failed' });
        else expect(refusal).toMatchObject({ status: 501, code: 'not_implemented' });
      }),
      { numRuns: 500 },
    );
    expect(
      headRefusal(
        head([
          ['Host', 'h'],
          ['Transfer-Encoding', 'gzip, chunked'],
        ]),
      ),
    ).toMatchObject({ status: 501 });
    expect(
      headRefusal(
        head([
          ['Host', 'h'],
          ['Transfer-Encoding', 'gzip'],
        ]),
      ),
    ).toMatchObject({ status: 400 });
  });
});

describe('paths that are not valid percent-encoding', () => {
  const piece = fc.oneof(
    fc.constantFrom('%', '%z', '%zz', '%c0', '%ae', '%c0%ae', '%e2%82', '%e2%82%ac', '%25', '%2F', '%41', '/', 'pets'),
    fc.stringMatching(/^[a-zA-Z0-9%._~-]{0,4}$/),
  );
  const path = fc.array(piece, { maxLength: 8 }).map((parts) => `/v1/${parts.join('')}`);
  const query = fc.option(fc.constantFrom('?a=%zz', '?limit=1', '?%', ''), { nil: '' });

  it('leaves a valid path as it is, and makes any other one decode to its own text', () => {
    fc.assert(
      fc.property(path, query, (p, q) => {
        const target = literalTarget(p + q);
        let valid = true;
        try {
          decodeURIComponent(p);
        } catch {
          valid = false;
        }
        if (valid) {
          expect(target).toBe(p + q);
          return;
        }
        expect(target.endsWith(q)).toBe(true);
        const rewritten = target.slice(0, target.length - q.length);
        expect(decodeURIComponent(rewritten)).toBe(p);
      }),
      { numRuns: 1000 },
    );
    expect(literalTarget('/v1/pets/%')).toBe('/v1/pets/%25');
    expect(literalTarget('/v1/pets/%c0%ae?x=%zz')).toBe('/v1/pets/%25c0%25ae?x=%zz');
    expect(literalTarget('/v1/pets?status=%zz')).toBe('/v1/pets?status=%zz');
  });
});
