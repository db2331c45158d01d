import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { buildService, RunningService, startService } from '../support/built-service.js';
import { scratchDir } from '../support/scratch.js';

/*
 * The README's shell examples, run as written on a fresh embedded instance of the built service,
 * the way the README tells a user to: start it (`npm start` builds, then runs `node dist/main.js`,
 * which startService runs from the test's build), take the development key it prints at first
 * start, run the "Using the API" block and check each answer's status against the `→ NNN` of its
 * comment; then stop the server, as "API keys" says, and run the key tool's block, each command
 * exiting 0.
 *
 * Two substitutions only, both of setup: the instance listens on a free port instead of 3000
 * (`localhost:3000` → `localhost:<port>`) and `export KEY=ask_...` gets the printed key;
 * `npm run apikey --` runs `node <build>/cli/apikey.js` (its `preapikey` script is the build the
 * test already made).
 *
 * The README's other commands are run elsewhere: `npm ci`, `npm run typecheck`, `lint`,
 * `format:check`, `npm test` with `DATABASE_URL` and `REDIS_URL`, `test:cluster` and `test:infra`
 * by CI (.ci/run); `npm start`'s built service by test/process/process.e2e-spec.ts (and this test); the
 * migrate command (`npm run db:migrate`, and the image's `node dist/database/migrate.main.js`) by
 * test/database/migrate-cli.e2e-spec.ts; `openapi:snapshot`, `openapi:lint` and `client:generate` are
 * the update and lint modes of test/docs/openapi.e2e-spec.ts, test/docs/openapi-lint.e2e-spec.ts and
 * clients/typescript/test/generated-types.e2e-spec.ts; `bench:docs` by test/bench/latest-result.spec.ts. Not run by a test here: `npm run bench`
 * and `bench:infra` (measurements, not checks) and the Deployment section's `docker build`,
 * `docker run` and `docker compose up`.
 */

const README = readFileSync('README.md', 'utf8');

/** The fenced sh/bash blocks of a `## ` section of the README. */
function shellBlocks(section: string): string[] {
  const start = README.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`README.md has no section "${section}"`);
  const end = README.indexOf('\n## ', start + 1);
  const text = README.slice(start, end < 0 ? undefined : end);
  return [...text.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

interface Example {
  /** The command, continuation lines joined as the shell joins them. */
  command: string;
  /** The status its comment announces (`→ 201`), if any. */
  expected?: number;
}

/**
 * The commands of a block, each with the `→ NNN` of the comment lines just above it or of its
 * own trailing comment. Setup lines (assignments, export) are commands without a status.
 */
export function examplesOf(block: string): Example[] {
  const examples: Example[] = [];
  let comment = '';
  const lines = block.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') {
      comment = '';
      continue;
    }
    if (line.trimStart().startsWith('#')) {
      comment += `${line}\n`;
      continue;
    }
    let command = line;
    while (command.endsWith('\\') && i + 1 < lines.length) command = `${command.slice(0, -1)}${lines[++i]}`;
    const status = /→ (\d{3})\b/.exec(`${comment}${command.includes(' # ') ? command : ''}`)?.[1];
    examples.push({ command, expected: status === undefined ? undefined : Number(status) });
    comment = '';
  }
  return examples;
}

function bash(script: string, env: Record<string, string>): { status: number | null; output: string } {
  const run = spawnSync('bash', ['-c', script], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the README, run as written on a fresh embedded instance', () => {
  let dataDir: string;
  let svc: RunningService | undefined;

  beforeAll(() => {
    dataDir = scratchDir('readme');
  });

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finds the examples and the status each announces', () => {
    const using = shellBlocks('Using the API').flatMap(examplesOf);
    expect(using.filter((e) => e.command.startsWith('curl ')).map((e) => e.expected)).toEqual([
      200, 201, 201, 200, 200, 200,
    ]);
  });

  it('answers every "Using the API" example as its comment says, with the development key printed at first start', async () => {
    // No NODE_ENV: development, as `npm start` on a fresh clone; the embedded database in DATA_DIR.
    svc = await startService({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, 60_000);
    const key = /^ {4}(ask2?_\S+)$/m.exec(svc.output())?.[1];
    expect(key).toBeDefined();
    const examples = shellBlocks('Using the API').flatMap(examplesOf);
    const setup = examples
      .filter((e) => !e.command.startsWith('curl '))
      .map((e) => e.command.replace(/^export KEY=ask_\.\.\..*$/, `export KEY=${key}`))
      .join('\n');
    expect(setup).toContain(`export KEY=${key}`);
    const curls = examples.filter((e) => e.command.startsWith('curl '));
    expect(curls.length).toBeGreaterThanOrEqual(5);
    const port = String(svc.port);
    for (const example of curls) {
      expect({ command: example.command, expected: example.expected }).toEqual({
        command: example.command,
        expected: expect.any(Number),
      });
      const script = `set -eu\n${setup}\n${example.command}`.replaceAll('localhost:3000', `localhost:${port}`);
      const run = bash(script, {});
      const statuses = [...run.output.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].map((m) => Number(m[1]));
      expect({ command: example.command, status: statuses.at(-1), exit: run.status }).toEqual({
        command: example.command,
        status: example.expected,
        exit: 0,
      });
    }
    // The idempotent create made a second animal; the fetch answered the first, created by the README.
    const pets = bash(`curl -s http://localhost:${port}/v1/pets -H "Authorization: Bearer ${key}"`, {});
    expect(JSON.parse(pets.output)).toEqual([
      { id: 1, name: 'Rex', categoryId: 7, status: 'available' },
      { id: 2, name: 'Rex', categoryId: 7, status: 'available' },
    ]);
  }, 120_000);

  it('runs every key tool example of "API keys" once the server is stopped', async () => {
    // "on the embedded database (stop the server first)": PGlite is one process at a time.
    expect(await svc!.stop('SIGTERM')).toBe(0);
    svc = undefined;
    const tool = path.join(path.dirname(buildService()), 'cli/apikey.js');
    const examples = shellBlocks('API keys').flatMap(examplesOf);
    expect(examples.length).toBeGreaterThanOrEqual(5);
    const outputs: string[] = [];
    for (const example of examples) {
      expect(example.command).toMatch(/^npm run apikey -- /);
      const command = example.command.replace(/^npm run apikey --/, `node ${tool}`);
      const run = bash(command, { DATA_DIR: dataDir });
      expect({ command: example.command, exit: run.status, output: run.status === 0 ? '' : run.output }).toEqual({
        command: example.command,
        exit: 0,
        output: '',
      });
      outputs.push(run.output);
    }
    // The two creates showed a key each; the list shows the development key and both new ones.
    expect(outputs[0]).toMatch(/ask2?_\S{20,}/);
    expect(outputs[1]).toMatch(/ask2?_\S{20,}/);
    expect(outputs[2]).toMatch(/Acme web/);
    expect(outputs[2]).toMatch(/development key/);
  }, 120_000);
});
