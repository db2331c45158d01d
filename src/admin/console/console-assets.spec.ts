import { gzipSync } from 'node:zlib';
import { consoleAssets } from './console-assets.js';
import { page } from './console-views.js';

describe('the console’s assets', () => {
  it('weigh at most 150 KiB gzip together: every script and style a page can load', () => {
    const assets = consoleAssets();
    // The heaviest page (with charts) loads all of them.
    const loaded = [
      ...page({ title: 't', signedInAs: 'x', charts: true }, '').text.matchAll(
        /(?:src|href)="\/admin\/assets\/([^"]+)"/g,
      ),
    ].map((m) => m[1]);
    expect(loaded.sort()).toEqual([...assets.keys()].sort());
    const gzipped = loaded.reduce((total, name) => total + gzipSync(assets.get(name)!.body, { level: 9 }).length, 0);
    expect(gzipped).toBeGreaterThan(10 * 1024);
    expect(gzipped).toBeLessThanOrEqual(150 * 1024);
  });

  it('serve uPlot as the package ships it', () => {
    const uplot = consoleAssets().get('uPlot.iife.min.js')!;
    expect(uplot.type).toBe('text/javascript; charset=utf-8');
    expect(uplot.body.toString('utf8')).toMatch(/uPlot/);
  });
});
