import { execFileSync } from 'node:child_process';
import { findOrInstall } from './debian-package.js';
import { RunningPgbouncer, startPgbouncer as start } from './local-servers.mjs';

export type { RunningPgbouncer } from './local-servers.mjs';

export function pgbouncerVersion(): string {
  const bin = findOrInstall('pgbouncer', 'pgbouncer');
  return execFileSync(bin, ['--version'], { encoding: 'utf8' }).split('\n')[0];
}

/** PgBouncer (local-servers.mjs), installed from Debian's package when missing. */
export function startPgbouncer(serverUrl: string, options: { poolSize?: number } = {}): Promise<RunningPgbouncer> {
  return start(serverUrl, { ...options, bin: findOrInstall('pgbouncer', 'pgbouncer') });
}
