import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './built-service.js';
import { watchChild, WatchedChild } from './child-process.js';
import { writeSentinelConf } from './sentinel-conf.mjs';
import { waitFor } from './wait-for.js';

const run = promisify(execFile);

/** One redis-server (a data node or a sentinel) of a test's topology, on a loopback port. */
export interface RedisProcess {
  port: number;
  child: ChildProcess;
  watched: WatchedChild;
}

/** Runs a redis-cli command against a node; its trimmed output. */
export async function redisCli(port: number, password: string | undefined, ...args: string[]): Promise<string> {
  const auth = password ? ['-a', password, '--no-auth-warning'] : [];
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...auth, ...args], {
    timeout: 10_000,
  });
  return stdout.trim();
}

/** A free port whose cluster bus port (the port + 10000, which must exist) is free too. */
async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port > 55_000) continue;
    const bus = net.createServer();
    const free = await new Promise<boolean>((resolve) => {
      bus.once('error', () => resolve(false));
      bus.listen(port + 10_000, '127.0.0.1', () => bus.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

async function startProcess(dir: string, args: string[], port: number): Promise<RedisProcess> {
  const child = spawn('redis-server', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const watched = watchChild(child);
  await waitFor(async () => watched.done() || (await redisCli(port, undefined, 'ping')).length > 0, {
    what: `redis-server on port ${port} to answer`,
  });
  if (watched.done()) throw new Error(`redis-server on port ${port} exited:\n${watched.output()}`);
  return { port, child, watched };
}

function dataNodeArgs(port: number, password: string): string[] {
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

export interface RunningRedisCluster {
  password: string;
  nodes: RedisProcess[];
  /** REDIS_CLUSTER_NODES for the service: every node (any one would do). */
  nodesEnv: string;
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /** SIGKILLs the node on `port`. */
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}

/** Waits until every live node reports the cluster ok, and every replica's link to its master is up. */
async function clusterSettled(nodes: RedisProcess[], password: string): Promise<void> {
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
export async function startRedisCluster(): Promise<RunningRedisCluster> {
  const password = `cluster-${Math.random().toString(36).slice(2)}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-redis-cluster-'));
  const nodes: RedisProcess[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.watched.stop('SIGKILL', 5000)));
    rmSync(dir, { recursive: true, force: true });
  };
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
      nodes.push(await startProcess(dir, args, port));
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
    async masterOf(key: string) {
      const port = live()[0].port;
      const slot = Number(await redisCli(port, password, 'cluster', 'keyslot', key));
      const slots = JSON.parse(await redisCli(port, password, '--json', 'cluster', 'slots')) as [
        number,
        number,
        [string, number, string],
      ][];
      const range = slots.find(([from, to]) => from <= slot && slot <= to);
      if (!range) throw new Error(`no node serves slot ${slot}`);
      return range[2][1];
    },
    async kill(port: number) {
      const node = nodes.find((n) => n.port === port);
      await node?.watched.stop('SIGKILL', 5000);
    },
    stop,
  };
}

/** Waits until the live nodes agree the cluster is ok again (after a failover). */
export function clusterRecovered(cluster: RunningRedisCluster): Promise<void> {
  return clusterSettled(
    cluster.nodes.filter((n) => !n.watched.done()),
    cluster.password,
  );
}

export interface RunningRedisSentinel {
  password: string;
  name: string;
  master: RedisProcess;
  replica: RedisProcess;
  sentinels: RedisProcess[];
  /** REDIS_SENTINELS for the service. */
  sentinelsEnv: string;
  /** The master's port as the sentinels report it now. */
  masterPort(): Promise<number>;
  stop(): Promise<void>;
}

/** A master and a replica, password-protected, watched by 3 sentinels (quorum 2). */
export async function startRedisSentinel(): Promise<RunningRedisSentinel> {
  const password = `sentinel-${Math.random().toString(36).slice(2)}`;
  const name = 'animal-store';
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-redis-sentinel-'));
  const all: RedisProcess[] = [];
  const stop = async () => {
    await Promise.all(all.map((n) => n.watched.stop('SIGKILL', 5000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const masterPort = await freePort();
    const master = await startProcess(dir, dataNodeArgs(masterPort, password), masterPort);
    all.push(master);
    const replicaPort = await freePort();
    const replica = await startProcess(
      dir,
      [...dataNodeArgs(replicaPort, password), '--replicaof', '127.0.0.1', String(masterPort)],
      replicaPort,
    );
    all.push(replica);
    const sentinels: RedisProcess[] = [];
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
      const sentinel = await startProcess(dir, [file, '--sentinel'], port);
      sentinels.push(sentinel);
      all.push(sentinel);
    }
    // Ready when every sentinel knows the replica and the other two, and the replica is in sync.
    await waitFor(
      async () => {
        for (const s of sentinels) {
          const info = (await redisCli(s.port, undefined, 'sentinel', 'master', name)).split('\n');
          const field = (k: string) => info[info.indexOf(k) + 1];
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
