// Runs `npm run build` only when the built output is missing or older than what it is built
// from, so `npm run apikey -- …` and `npm run db:migrate` start from dist/ at once on every run
// after the first. Usage: node scripts/build-if-stale.mjs dist/cli/apikey.js
// Build messages go to stderr: a command's stdout (such as the key tool's --json) stays clean.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const SOURCES = ['src', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package.json'];

function newestMtime(entry) {
  const stat = statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a file deleted from the folder changes the folder's own mtime
  for (const child of readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, child)));
  return newest;
}

const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: node scripts/build-if-stale.mjs <built file>\n');
  process.exit(2);
}
const built = statSync(target, { throwIfNoEntry: false })?.mtimeMs ?? 0;
if (built < Math.max(...SOURCES.map(newestMtime))) {
  process.stderr.write(`${built === 0 ? `${target} is missing` : 'sources changed'}: building dist/ (npm run build)\n`);
  const run = spawnSync('npm', ['run', '--silent', 'build'], {
    stdio: ['ignore', process.stderr, 'inherit'],
    shell: process.platform === 'win32',
  });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
