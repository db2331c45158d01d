// The configuration file of one local Redis Sentinel, for the infrastructure tests
// (test/support/local-servers.mjs), which `npm run bench:infra` uses too.
// Plain JavaScript so that the bench can import it; its types are in sentinel-conf.d.mts.
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Writes `sentinel-<port>.conf` into `dir` and returns its path: a sentinel on 127.0.0.1:`port`
 * watching the master `name` at 127.0.0.1:`masterPort` with a quorum of 2, authenticating with
 * `password`. A sentinel rewrites its file as it learns the topology, so each gets its own.
 * `downAfterMs` and `failoverTimeoutMs` shorten Redis's defaults (30 s and 3 min) for tests that
 * wait for a failover.
 */
export function writeSentinelConf(dir, { port, name, masterPort, password, downAfterMs, failoverTimeoutMs }) {
  const file = path.join(dir, `sentinel-${port}.conf`);
  writeFileSync(
    file,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
      `sentinel auth-pass ${name} ${password}`,
      ...(downAfterMs === undefined ? [] : [`sentinel down-after-milliseconds ${name} ${downAfterMs}`]),
      ...(failoverTimeoutMs === undefined ? [] : [`sentinel failover-timeout ${name} ${failoverTimeoutMs}`]),
      '',
    ].join('\n'),
  );
  return file;
}
