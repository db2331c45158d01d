import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { SERVICE_NODE_FLAGS as BENCH_SERVICE_NODE_FLAGS } from '../../bench/service-flags.mjs';
import { SERVICE_NODE_FLAGS } from '../support/built-service.js';

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

/** What `node --expose-gc <flags> -e <script>` prints; it must exit 0 without a warning. */
function traceOf(flags: string[], script: string): string {
  const run = spawnSync(process.execPath, ['--expose-gc', ...flags, '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout;
}

/** The decisions to pretenure a literal that V8 prints while running SURVIVING_LITERALS. */
function pretenuringDecisions(flags: string[]): string[] {
  const trace = traceOf(['--max-semi-space-size=1', '--trace-pretenuring-statistics', ...flags], SURVIVING_LITERALS);
  return trace.split('\n').filter((line) => /AllocationSite.*=> (maybe )?tenure$/.test(line));
}

/** A heap that keeps growing, collected in full after each step: V8 sets the old generation's limit after each. */
const GROWING_HEAP = `
  const keep = [];
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 200000; i++) keep.push({ i });
    gc();
  }`;

/**
 * The old generation's limit after each full collection of GROWING_HEAP, as a multiple of what
 * survived it (--trace-gc-verbose's "Limit: old size: N KB, new limit: M KB"), under the image's
 * 512 MiB ceiling.
 */
function growthAfterFullCollections(flags: string[]): number[] {
  const trace = traceOf(['--max-old-space-size=512', '--trace-gc-verbose', ...flags], GROWING_HEAP);
  const limits = [...trace.matchAll(/\[HeapController\] Limit: old size: (\d+) KB, new limit: (\d+) KB/g)];
  expect(limits.length).toBeGreaterThanOrEqual(4);
  return limits.map(([, old, limit]) => Number(limit) / Number(old));
}

/** Node's flags in a command that starts dist/main.js: what comes between `node` and the script. */
function nodeFlags(command: string[], what: string): string[] {
  const node = command.indexOf('node');
  const main = command.indexOf('dist/main.js');
  if (node === -1 || main <= node) throw new Error(`${what} does not run "node … dist/main.js": ${command.join(' ')}`);
  return command.slice(node + 1, main);
}

describe("the server process's V8 settings", () => {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1];

  it('V8 pretenures a literal whose objects all survive scavenges, by default', () => {
    expect(pretenuringDecisions([]).length).toBeGreaterThan(0);
  });

  it("with the server's command-line flags no literal is ever allocated old", () => {
    expect(SERVICE_NODE_FLAGS).toContain('--no-allocation-site-pretenuring');
    expect(pretenuringDecisions(SERVICE_NODE_FLAGS)).toEqual([]);
  });

  it('under the 512 MiB ceiling V8 lets the old generation grow less than twice what survives, by default', () => {
    expect(Math.min(...growthAfterFullCollections([]))).toBeLessThan(2);
  });

  it("with the server's command-line flags it grows to at least twice what survives before the next full collection", () => {
    expect(SERVICE_NODE_FLAGS).toContain('--heap-growing-percent=100');
    expect(Math.min(...growthAfterFullCollections(SERVICE_NODE_FLAGS))).toBeGreaterThanOrEqual(2);
  });

  it('npm start, npm run start:prod, the image, the tests and the bench start the server with the same flags', () => {
    expect(BENCH_SERVICE_NODE_FLAGS).toEqual(SERVICE_NODE_FLAGS);
    expect(nodeFlags(scripts.start.split(/\s+/), 'npm start')).toEqual(SERVICE_NODE_FLAGS);
    expect(nodeFlags(scripts['start:prod'].split(/\s+/), 'npm run start:prod')).toEqual(SERVICE_NODE_FLAGS);
    expect(cmd).toBeDefined();
    expect(nodeFlags(JSON.parse(cmd as string) as string[], "the Dockerfile's CMD")).toEqual(SERVICE_NODE_FLAGS);
  });
});
