import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

/** The decisions to pretenure a literal that V8 prints while running SURVIVING_LITERALS. */
function pretenuringDecisions(flags: string[]): string[] {
  const run = spawnSync(
    process.execPath,
    ['--expose-gc', '--max-semi-space-size=1', '--trace-pretenuring-statistics', ...flags, '-e', SURVIVING_LITERALS],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
  );
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout.split('\n').filter((line) => /AllocationSite.*=> (maybe )?tenure$/.test(line));
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

  it('npm start, npm run start:prod, the image and the tests start the server with the same flags', () => {
    expect(nodeFlags(scripts.start.split(/\s+/), 'npm start')).toEqual(SERVICE_NODE_FLAGS);
    expect(nodeFlags(scripts['start:prod'].split(/\s+/), 'npm run start:prod')).toEqual(SERVICE_NODE_FLAGS);
    expect(cmd).toBeDefined();
    expect(nodeFlags(JSON.parse(cmd as string) as string[], "the Dockerfile's CMD")).toEqual(SERVICE_NODE_FLAGS);
  });
});
