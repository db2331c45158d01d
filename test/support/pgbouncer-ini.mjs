// The one pgbouncer.ini of a local PgBouncer, for the infrastructure tests
// (test/support/local-servers.mjs), which `npm run bench:infra` uses too. Plain JavaScript so
// that the bench can import it; its types are in pgbouncer-ini.d.mts.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { URL } from 'node:url';

/**
 * Writes `pgbouncer.ini` and its `userlist.txt` into `dir` and returns the ini's path: Debian's
 * PgBouncer in transaction mode with its usual settings, in front of the PostgreSQL of
 * `serverUrl` (any database name, as its user, trusted), on 127.0.0.1:`port`. No
 * `ignore_startup_parameters`: a client that sends one it refuses fails.
 */
export function writePgbouncerIni(dir, { serverUrl, port, poolSize = 20, logFile, pidFile }) {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username) || 'postgres';
  const ini = path.join(dir, 'pgbouncer.ini');
  const userlist = path.join(dir, 'userlist.txt');
  writeFileSync(userlist, `"${user}" ""\n`);
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
      `auth_file = ${userlist}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      `default_pool_size = ${poolSize}`,
      ...(logFile ? [`logfile = ${logFile}`] : []),
      ...(pidFile ? [`pidfile = ${pidFile}`] : []),
      '',
    ].join('\n'),
  );
  return ini;
}
