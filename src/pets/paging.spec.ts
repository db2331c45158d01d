import fc from 'fast-check';
import { ApiError } from '../errors/api-error.js';
import { INT64_MAX } from '../json/int64.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { nextPageLink, pageRequest } from './paging.js';
import { PET_STATUSES } from './pet-status.js';

const BASE = 'https://api.example.com/v1';

describe('listPets paging', () => {
  it('reads the limit (20 by default), the filter and the cursor of a query', () => {
    expect(pageRequest({})).toEqual({ limit: 20, status: undefined, after: undefined });
    expect(pageRequest({ limit: '7', status: 'sold', cursor: encodeCursor(41n) })).toEqual({
      limit: 7,
      status: 'sold',
      after: 41n,
    });
  });

  it('refuses a cursor this service did not issue as invalid_parameter on the cursor field', () => {
    const cursor = Buffer.from('p1.0').toString('base64url');
    let thrown: unknown;
    try {
      pageRequest({ cursor });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
      message: 'cursor is not a cursor this service issued.',
      details: [{ field: 'cursor', message: 'cursor is not a cursor this service issued' }],
    });
  });

  it('links no next page after the last one', () => {
    expect(nextPageLink(BASE, { limit: 5 }, null)).toBeUndefined();
  });

  it('links the next page with the same limit and filter, in that order, and a cursor after the last id', () => {
    expect(nextPageLink(BASE, { limit: 20 }, 20)).toBe(
      `<${BASE}/pets?limit=20&cursor=${encodeCursor(20)}>; rel="next"`,
    );
    expect(nextPageLink(BASE, { limit: 3, status: 'pending', after: 9n }, 12n)).toBe(
      `<${BASE}/pets?limit=3&status=pending&cursor=${encodeCursor(12n)}>; rel="next"`,
    );
  });

  it('gives a next link whose query asks for exactly the next page (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.option(fc.constantFrom(...PET_STATUSES), { nil: undefined }),
        fc.bigInt({ min: 1n, max: INT64_MAX }),
        (limit, status, last) => {
          const link = nextPageLink(BASE, { limit, status }, last)!;
          const [, target] = /^<([^>]+)>; rel="next"$/.exec(link)!;
          const url = new URL(target);
          expect(`${url.origin}${url.pathname}`).toBe(`${BASE}/pets`);
          // Already in the form URLSearchParams writes: nothing in it needed encoding.
          expect(url.search.slice(1)).toBe(url.searchParams.toString());
          const query = Object.fromEntries(url.searchParams);
          expect(pageRequest(query)).toEqual({ limit, status, after: last });
          expect(decodeCursor(query.cursor)).toBe(last);
        },
      ),
    );
  });
});
