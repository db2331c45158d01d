import fc from 'fast-check';
import { escapeHtml, markup } from './html.js';

describe('the console’s html template', () => {
  it('escapes every interpolated text so it cannot open a tag or leave an attribute', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const out = markup`<p title="${text}">${text}</p>`.text;
        const inner = escapeHtml(text);
        expect(inner).not.toMatch(/[<>"']/);
        expect(out).toBe(`<p title="${inner}">${inner}</p>`);
        // Unescaping gives the text back: nothing is lost.
        const back = inner.replace(
          /&(lt|gt|quot|#39|amp);/g,
          (_m, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[e] as string,
        );
        expect(back).toBe(text);
      }),
    );
  });

  it('keeps nested templates as markup and renders nothing for null, undefined and false', () => {
    const cell = (v: string) => markup`<td>${v}</td>`;
    const row = markup`<tr>${['<a>', 'b'].map(cell)}${null}${undefined}${false}</tr>`;
    expect(row.text).toBe('<tr><td>&lt;a&gt;</td><td>b</td></tr>');
  });
});
