// Builds the package's dist/ (ESM .js and .d.ts) from src/; `npm pack` runs it (prepack).
// Uses the repository root's TypeScript, the version the project pins: openapi-typescript puts an
// older one in this folder's node_modules/.bin. dist/ is emptied first, so a file removed from
// src/ never lingers in a tarball.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const packageDir = path.resolve(import.meta.dirname, '..');
const tsc = createRequire(path.resolve(packageDir, '../../package.json')).resolve('typescript/bin/tsc');

rmSync(path.join(packageDir, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: packageDir, stdio: 'inherit' });
