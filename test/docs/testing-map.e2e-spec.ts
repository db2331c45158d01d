// docs/testing.md's map of suites says what is on disk: every spec file is in a row of "What each
// suite covers", every row names files or folders that exist, and no page names a spec that is gone.
import path from 'node:path';
import { markdownPages } from '../support/docs-links.js';
import { mapProblems, specFiles, staleSpecPaths } from '../support/testing-map.js';

const ROOT = path.resolve(__dirname, '../..');

describe("docs/testing.md's map of the suites", () => {
  it('has a row for every spec file, and every row names spec files or folders that exist', () => {
    expect(mapProblems(ROOT)).toEqual([]);
  });

  it('finds the specs of every layer', () => {
    const files = specFiles(ROOT);
    expect(files).toEqual(
      expect.arrayContaining([
        'src/json/int64.spec.ts',
        'test/pets/pets.e2e-spec.ts',
        'test/docs/testing-map.e2e-spec.ts',
        'test/cluster/balancer.cluster-spec.ts',
        'clients/typescript/test/client.e2e-spec.ts',
      ]),
    );
  });

  it('names no spec file that is not there, on any documentation page', () => {
    expect(staleSpecPaths(ROOT, markdownPages(ROOT))).toEqual([]);
  });

  it('reports a spec without a row, a row naming nothing there, and accepts folders and patterns', () => {
    const text = [
      '## What each suite covers',
      '',
      '| Suite | What it checks |',
      '|---|---|',
      '| `src/**/*.spec.ts` | units |',
      '| `test/pets/` | pets |',
      '| `test/docs/testing-map.e2e-spec.ts`, `test/docs/gone.e2e-spec.ts` | the map |',
      '| `test/nowhere/` | nothing |',
      '',
      '## Next',
      '| `test/ignored.e2e-spec.ts` | another section |',
    ].join('\n');
    const problems = mapProblems(ROOT, text);
    expect(problems).toEqual(
      expect.arrayContaining([
        'docs/testing.md:7: `test/docs/gone.e2e-spec.ts`: no such spec file; remove it from the row or correct the path',
        'docs/testing.md:8: `test/nowhere/`: no spec file matches it; remove it from the row or correct the path',
        expect.stringMatching(
          /^test\/docs\/readme\.e2e-spec\.ts is in no row of docs\/testing\.md, .*add the row \| `test\/docs\/readme\.e2e-spec\.ts` \|/,
        ),
      ]),
    );
    expect(problems.filter((p) => /^(src\/|test\/pets\/|test\/docs\/testing-map)/.test(p))).toEqual([]);
  });
});
