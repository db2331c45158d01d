import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildService } from './support/built-service.js';

/**
 * A literal all of whose objects are alive at each scavenge: the pattern after which V8 allocates
 * a literal's objects in the old generation (pretenures it). A 1 MiB semi-space lets V8 decide at
 * once; --trace-pretenuring-statistics prints each decision.
 */
const SURVIVING_LITERALS = `
  const keep = [];
  const make = (i) => ({ i, inner: [i] });
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 500; i++) keep.push(make(i));
    gc({ type: 'minor' });
  }`;

/** The decisions to pretenure a literal that V8 prints while running SURVIVING_LITERALS. */
function pretenuringDecisions(preload: string[]): string[] {
  const run = spawnSync(
    process.execPath,
    ['--expose-gc', '--max-semi-space-size=1', '--trace-pretenuring-statistics', ...preload, '-e', SURVIVING_LITERALS],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
  );
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout.split('\n').filter((line) => /AllocationSite.*=> (maybe )?tenure$/.test(line));
}

describe("the server process's V8 settings", () => {
  it('V8 pretenures a literal whose objects all survive scavenges, by default', () => {
    expect(pretenuringDecisions([]).length).toBeGreaterThan(0);
  });

  it('the first module main.js runs turns pretenuring off: no literal is ever allocated old', () => {
    const dist = path.dirname(buildService());
    const firstImport = /^import\s+['"]([^'"]+)['"]/m.exec(readFileSync(path.join(dist, 'main.js'), 'utf8'))?.[1];
    expect(firstImport).toBe('./lifecycle/heap-tuning.js');
    const tuning = pathToFileURL(path.join(dist, 'lifecycle', 'heap-tuning.js')).href;
    expect(pretenuringDecisions(['--import', tuning])).toEqual([]);
  });
});
