import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * scripts/build-if-stale.mjs, which `npm run apikey` and `npm run db:migrate` run first: it
 * builds only when the built file is missing or older than a source. Run here in a project of
 * its own whose "build" script counts its runs, so no real build is needed.
 */
const SCRIPT = path.resolve('scripts/build-if-stale.mjs');

let project: string;
const builds = () => readFileSync(path.join(project, 'builds'), 'utf8').length;
const ensureBuilt = () => {
  const run = spawnSync(process.execPath, [SCRIPT, 'dist/tool.js'], { cwd: project, encoding: 'utf8' });
  expect(run.status).toBe(0);
  expect(run.stdout).toBe(''); // the command's own stdout (such as --json output) stays clean
  return run.stderr;
};
/** Sets a file's modification time `seconds` from now. */
const age = (file: string, seconds: number) => {
  const at = new Date(Date.now() + seconds * 1000);
  utimesSync(path.join(project, file), at, at);
};

beforeEach(() => {
  project = mkdtempSync(path.join(tmpdir(), 'build-if-stale-'));
  mkdirSync(path.join(project, 'src'));
  writeFileSync(path.join(project, 'src/tool.ts'), 'export {};\n');
  writeFileSync(path.join(project, 'builds'), '');
  const build =
    "require('fs').mkdirSync('dist',{recursive:true});require('fs').writeFileSync('dist/tool.js','');require('fs').appendFileSync('builds','x')";
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ scripts: { build: `node -e "${build}"` } }));
});

afterEach(() => rmSync(project, { recursive: true, force: true }));

it('builds when the output is missing, then not again until a source is newer', () => {
  expect(ensureBuilt()).toMatch(/dist\/tool\.js is missing: building/);
  expect(builds()).toBe(1);
  for (const file of ['src', 'src/tool.ts', 'package.json']) age(file, -60);
  expect(ensureBuilt()).toBe('');
  expect(builds()).toBe(1);
  age('src/tool.ts', 60);
  expect(ensureBuilt()).toMatch(/sources changed: building/);
  expect(builds()).toBe(2);
});

it('fails as the build fails', () => {
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ scripts: { build: 'node -e "process.exit(3)"' } }),
  );
  const run = spawnSync(process.execPath, [SCRIPT, 'dist/tool.js'], { cwd: project, encoding: 'utf8' });
  expect(run.status).toBe(3);
});
