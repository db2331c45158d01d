import fc from 'fast-check';
import { linkTargets } from './link.js';

describe('Link header targets', () => {
  it('finds the target of a relation among several links, whatever the spelling of rel', () => {
    const header =
      '<https://api.example.test/v1/pets>; rel="successor-version", <https://api.example.test/v1/pets?limit=2&cursor=a,b>; rel="next"';
    expect(linkTargets(header, 'next')).toEqual(['https://api.example.test/v1/pets?limit=2&cursor=a,b']);
    expect(linkTargets(header, 'successor-version')).toEqual(['https://api.example.test/v1/pets']);
    expect(linkTargets('</p?c=1>;rel=next', 'next')).toEqual(['/p?c=1']);
    expect(linkTargets('</p>; title="x"; rel="prev NEXT"', 'next')).toEqual(['/p']);
    expect(linkTargets('</p>; rel="nextpage"', 'next')).toEqual([]);
    expect(linkTargets(null, 'next')).toEqual([]);
  });

  it('never throws, and finds every link it is given (property)', () => {
    const target = fc.webUrl({ withQueryParameters: true }).filter((u) => !/[<>]/.test(u));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(target, fc.constantFrom('next', 'prev', 'successor-version')), { maxLength: 4 }),
        fc.string(),
        (links, junk) => {
          const header = links.map(([t, rel]) => `<${t}>; rel="${rel}"`).join(', ');
          expect(linkTargets(header, 'next')).toEqual(links.filter(([, rel]) => rel === 'next').map(([t]) => t));
          expect(() => linkTargets(junk, 'next')).not.toThrow();
        },
      ),
    );
  });
});
