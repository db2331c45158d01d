import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './built-service.js';
import { findOrInstall } from './debian-package.js';
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
 * Debian's PgBouncer in transaction mode with its usual settings, in front of the PostgreSQL of
 * `serverUrl`, on a free loopback port. PgBouncer refuses to run as root: as root it is started
 * as `postgres`. No `ignore_startup_parameters`: a client that sends one it refuses fails.
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
  const ini = path.join(dir, 'pgbouncer.ini');
  const pidFile = path.join(dir, 'pgbouncer.pid');
  const logFile = path.join(dir, 'pgbouncer.log');
  writeFileSync(path.join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      `default_pool_size = ${options.poolSize ?? 20}`,
      `logfile = ${logFile}`,
      `pidfile = ${pidFile}`,
      '',
    ].join('\n'),
  );
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
