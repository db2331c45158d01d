// The local servers the tests and the bench start: free loopback ports, waiting for a condition,
// child processes stopped by their pid, and the Redis Cluster, Redis Sentinel and PgBouncer of
// the infrastructure tests (test/infra) and `npm run bench:infra` (bench/infra.mjs). Plain
// JavaScript so that the bench's scripts can import it; its types are in local-servers.d.mts.
/* global setTimeout, clearTimeout */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { URL } from 'node:url';
import { promisify } from 'node:util';
import { writePgbouncerIni } from './pgbouncer-ini.mjs';
import { writeSentinelConf } from './sentinel-conf.mjs';

const run = promisify(execFile);

/** Whether `port` on 127.0.0.1 can be listened on now. */
function canListen(port) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A free loopback port: one the system picks, or with `from`, the first free one of the 100 from
 * there (the bench's servers sit at known ports).
 */
export async function freePort(from) {
  if (from === undefined) {
    const srv = net.createServer();
    await new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
    const { port } = srv.address();
    await new Promise((resolve) => srv.close(resolve));
    return port;
  }
  for (let port = from; port < from + 100; port++) if (await canListen(port)) return port;
  throw new Error(`no free port from ${from} to ${from + 99}`);
}

/** A free port whose cluster bus port (the port + 10000, which must exist) is free too. */
export async function freeClusterPort() {
  for (;;) {
    const port = await freePort();
    if (port <= 55_000 && (await canListen(port + 10_000))) return port;
  }
}

export const WAIT_FOR_TIMEOUT_MS = 20_000;

/**
 * Waits for a condition instead of for a time: polls `condition` until it returns a value other
 * than undefined, null or false, and returns that value. A condition that throws counts as not
 * yet (a server still starting refuses connections); its last error is in the failure message.
 *
 * The timeout is a guard against a hang, not a bound a test asserts: generous, so that a busy
 * machine is slow, never wrong. Polling (rather than an event) because most conditions are
 * another process's state, seen only by asking.
 */
export async function waitFor(condition, { what, timeoutMs = WAIT_FOR_TIMEOUT_MS, intervalMs = 25 }) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  for (;;) {
    try {
      const value = await condition();
      if (value !== undefined && value !== null && value !== false) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why =
        lastError === undefined
          ? ''
          : ` (last check failed: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A child process's output so far, and its end; `stop` signals it by its pid. */
export function watchChild(child) {
  let out = '';
  child.stdout?.on('data', (d) => (out += d.toString()));
  child.stderr?.on('data', (d) => (out += d.toString()));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));
  return {
    output: () => out,
    exited,
    done: () => done,
    async stop(signal, killAfterMs) {
      if (!done) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

// --- Redis: a cluster and a sentinel-watched master ---------------------------------------------

/** Runs a redis-cli command against a node; its trimmed output. */
export async function redisCli(port, password, ...args) {
  const auth = password ? ['-a', password, '--no-auth-warning'] : [];
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...auth, ...args], {
    timeout: 10_000,
  });
  return stdout.trim();
}

/** Starts redis-server with `args` (which name `port`) in `dir`, and waits until it answers on `port`. */
export async function startRedisProcess(dir, args, port) {
  const child = spawn('redis-server', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const watched = watchChild(child);
  await waitFor(async () => watched.done() || (await redisCli(port, undefined, 'ping')).length > 0, {
    what: `redis-server on port ${port} to answer`,
  });
  if (watched.done()) throw new Error(`redis-server on port ${port} exited:\n${watched.output()}`);
  return { port, child, watched };
}

function dataNodeArgs(port, password) {
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--requirepass',
    password,
    '--masterauth',
    password,
  ];
}

const newPassword = (what) => `${what}-${randomBytes(8).toString('hex')}`;

/** A temporary directory for a topology's processes, and `stop`, which kills them and removes it. */
function topology(what) {
  const dir = mkdtempSync(path.join(tmpdir(), `animal-store-redis-${what}-`));
  const processes = [];
  const stop = async () => {
    await Promise.all(processes.map((n) => n.watched.stop('SIGKILL', 5000)));
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, processes, stop };
}

/** Waits until every live node reports the cluster ok, and every replica's link to its master is up. */
async function clusterSettled(nodes, password) {
  await waitFor(
    async () => {
      for (const node of nodes.filter((n) => !n.watched.done())) {
        if (!(await redisCli(node.port, password, 'cluster', 'info')).includes('cluster_state:ok')) return false;
        const replication = await redisCli(node.port, password, 'info', 'replication');
        if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) return false;
      }
      return true;
    },
    { what: 'the Redis Cluster to be ok on every node', timeoutMs: 60_000, intervalMs: 100 },
  );
}

/** A Redis Cluster of 3 masters and 3 replicas (redis-cli --cluster create), password-protected. */
export async function startRedisCluster() {
  const password = newPassword('cluster');
  const { dir, processes: nodes, stop } = topology('cluster');
  try {
    for (let i = 0; i < 6; i++) {
      const port = await freeClusterPort();
      const args = [
        ...dataNodeArgs(port, password),
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        path.join(dir, `nodes-${port}.conf`),
        // Failover within a second or two of a master's death.
        '--cluster-node-timeout',
        '1000',
      ];
      nodes.push(await startRedisProcess(dir, args, port));
    }
    await run(
      'redis-cli',
      [
        '-a',
        password,
        '--no-auth-warning',
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      { timeout: 60_000 },
    );
    await clusterSettled(nodes, password);
  } catch (err) {
    await stop();
    throw err;
  }
  const live = () => nodes.filter((n) => !n.watched.done());
  return {
    password,
    nodes,
    nodesEnv: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    async masterOf(key) {
      const port = live()[0].port;
      const slot = Number(await redisCli(port, password, 'cluster', 'keyslot', key));
      const slots = JSON.parse(await redisCli(port, password, '--json', 'cluster', 'slots'));
      const range = slots.find(([from, to]) => from <= slot && slot <= to);
      if (!range) throw new Error(`no node serves slot ${slot}`);
      return range[2][1];
    },
    async kill(port) {
      await nodes.find((n) => n.port === port)?.watched.stop('SIGKILL', 5000);
    },
    stop,
  };
}

/** Waits until the live nodes agree the cluster is ok again (after a failover). */
export function clusterRecovered(cluster) {
  return clusterSettled(
    cluster.nodes.filter((n) => !n.watched.done()),
    cluster.password,
  );
}

/** A master and a replica, password-protected, watched by 3 sentinels (quorum 2). */
export async function startRedisSentinel({ name = 'animal-store' } = {}) {
  const password = newPassword('sentinel');
  const { dir, processes: all, stop } = topology('sentinel');
  try {
    const masterPort = await freePort();
    const master = await startRedisProcess(dir, dataNodeArgs(masterPort, password), masterPort);
    all.push(master);
    const replicaPort = await freePort();
    const replica = await startRedisProcess(
      dir,
      [...dataNodeArgs(replicaPort, password), '--replicaof', '127.0.0.1', String(masterPort)],
      replicaPort,
    );
    all.push(replica);
    const sentinels = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const file = writeSentinelConf(dir, {
        port,
        name,
        masterPort,
        password,
        downAfterMs: 1000,
        failoverTimeoutMs: 5000,
      });
      const sentinel = await startRedisProcess(dir, [file, '--sentinel'], port);
      sentinels.push(sentinel);
      all.push(sentinel);
    }
    // Ready when every sentinel knows the replica and the other two, and the replica is in sync.
    await waitFor(
      async () => {
        for (const s of sentinels) {
          const info = (await redisCli(s.port, undefined, 'sentinel', 'master', name)).split('\n');
          const field = (k) => info[info.indexOf(k) + 1];
          if (field('num-slaves') !== '1' || field('num-other-sentinels') !== '2') return false;
        }
        return (await redisCli(replicaPort, password, 'info', 'replication')).includes('master_link_status:up');
      },
      { what: 'the sentinels to know the replica and each other', timeoutMs: 60_000, intervalMs: 100 },
    );
    return {
      password,
      name,
      master,
      replica,
      sentinels,
      sentinelsEnv: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
      async masterPort() {
        const live = sentinels.find((s) => !s.watched.done()) ?? sentinels[0];
        return Number(
          (await redisCli(live.port, undefined, 'sentinel', 'get-master-addr-by-name', name)).split('\n')[1],
        );
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

// --- PgBouncer -----------------------------------------------------------------------------------

/**
 * Debian's PgBouncer (`bin`) in transaction mode with its usual settings (pgbouncer-ini.mjs), in
 * front of the PostgreSQL of `serverUrl`, on a free loopback port. PgBouncer refuses to run as
 * root: as root it is started as `postgres`.
 */
export async function startPgbouncer(serverUrl, { poolSize, bin = 'pgbouncer' } = {}) {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username) || 'postgres';
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-pgbouncer-'));
  const pidFile = path.join(dir, 'pgbouncer.pid');
  const logFile = path.join(dir, 'pgbouncer.log');
  const ini = writePgbouncerIni(dir, { serverUrl, port, poolSize, logFile, pidFile });
  if (process.getuid?.() === 0) {
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
