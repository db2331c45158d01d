import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './built-service.js';
import { findOrInstall } from './debian-package.js';
import { writePgbouncerIni } from './pgbouncer-ini.mjs';
import { waitFor } from './wait-for.js';

export interface RunningPgbouncer {
  /** `postgresql://user@127.0.0.1:port/` : append a database name. */
  host: string;
  port: number;
  pid: number;
  log(): string;
  stop(): Promise<void>;
}

export function pgbouncerVersion(): string {
  const bin = findOrInstall('pgbouncer', 'pgbouncer');
  return execFileSync(bin, ['--version'], { encoding: 'utf8' }).split('\n')[0];
}

/**
 * Debian's PgBouncer in transaction mode with its usual settings (pgbouncer-ini.mjs), in front of
 * the PostgreSQL of `serverUrl`, on a free loopback port. PgBouncer refuses to run as root: as
 * root it is started as `postgres`.
 */
export async function startPgbouncer(
  serverUrl: string,
  options: { poolSize?: number } = {},
): Promise<RunningPgbouncer> {
  const bin = findOrInstall('pgbouncer', 'pgbouncer');
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username) || 'postgres';
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-pgbouncer-'));
  const pidFile = path.join(dir, 'pgbouncer.pid');
  const logFile = path.join(dir, 'pgbouncer.log');
  const ini = writePgbouncerIni(dir, { serverUrl, port, poolSize: options.poolSize, logFile, pidFile });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    execFileSync('chown', ['-R', 'postgres', dir]);
    chmodSync(dir, 0o755);
    execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', `${bin} -d ${ini}`], { timeout: 10_000 });
  } else {
    execFileSync(bin, ['-d', ini], { timeout: 10_000 });
  }
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const pid = await waitFor(() => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8').trim()), {
    what: 'pgbouncer to write its pid file',
  });
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return {
    host: `postgresql://${encodeURIComponent(user)}@127.0.0.1:${port}/`,
    port,
    pid,
    log,
    async stop() {
      if (alive()) process.kill(pid, 'SIGTERM');
      await waitFor(() => !alive(), { what: `pgbouncer (pid ${pid}) to exit` }).catch(() =>
        process.kill(pid, 'SIGKILL'),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
