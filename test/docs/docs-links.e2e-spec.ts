// Every relative link in the repository's Markdown pages points at a file that exists, and every
// #anchor at a heading of its page, slugged as GitHub slugs headings (github-slugger).
import path from 'node:path';
import { brokenLinks, markdownPages } from '../support/docs-links.js';

const ROOT = path.resolve(__dirname, '../..');

describe('links between the documentation pages', () => {
  const pages = markdownPages(ROOT);

  it('covers the pages a reader starts from', () => {
    expect(pages).toEqual(
      expect.arrayContaining([
        'README.md',
        'ARCHITECTURE.md',
        'SECURITY.md',
        'docs/performance.md',
        'docs/testing.md',
        'bench/README.md',
        'clients/typescript/README.md',
      ]),
    );
  });

  it.each(pages)('%s: every relative link and #anchor resolves', (page) => {
    expect(brokenLinks(ROOT, page)).toEqual([]);
  });

  it('reports a missing file and a missing heading, and skips code', () => {
    const text = [
      '# Title',
      '## A heading, with `code` and a [link](x.md)',
      'See [here](#a-heading-with-code-and-a-link), [gone](#nowhere),',
      '[file](no-such-file.md), [ok](testing.md#ci), [web](https://example.com/#x) and',
      '[bad](testing.md#no-such-heading). `[inline](#ignored)`',
      '```sh',
      '[inside a fence](#ignored)',
      '```',
      '## A heading, with `code` and a [link](x.md)',
      '[second of the same name](#a-heading-with-code-and-a-link-1)',
    ].join('\n');
    expect(brokenLinks(ROOT, 'docs/example.md', text)).toEqual([
      'docs/example.md:2: x.md: no such file',
      'docs/example.md:3: #nowhere: no such heading in docs/example.md',
      'docs/example.md:4: no-such-file.md: no such file',
      'docs/example.md:5: testing.md#no-such-heading: no such heading in docs/testing.md',
      'docs/example.md:9: x.md: no such file',
    ]);
  });
});
