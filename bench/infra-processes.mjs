// The processes of `npm run bench:infra` (bench/infra.mjs): PgBouncer, a Redis Cluster, Redis
// Sentinel and an OTLP receiver, each started on free loopback ports and stopped by its pid at
// cleanup(), with the helpers they share.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { URL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { writePgbouncerIni } from '../test/support/pgbouncer-ini.mjs';
import { writeSentinelConf } from '../test/support/sentinel-conf.mjs';

const run = promisify(execFile);
export const log = (msg) => process.stderr.write(`[bench:infra] ${msg}\n`);

/** What to undo at the end, last first. */
export const cleanups = [];
export async function cleanup() {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()();
    } catch (err) {
      log(`cleanup: ${err.message}`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void cleanup().then(() => process.exit(130)));

export async function freePort() {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

/** A free port whose cluster bus port (the port + 10000) is free too. */
export async function freeClusterPort() {
  for (;;) {
    const port = await freePort();
    if (port > 55_000) continue;
    const bus = net.createServer();
    const free = await new Promise((r) => {
      bus.once('error', () => r(false));
      bus.listen(port + 10_000, '127.0.0.1', () => bus.close(() => r(true)));
    });
    if (free) return port;
  }
}

export async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Starts a child process that is stopped (by its pid) at cleanup. */
export function child(command, args, options = {}) {
  const proc = spawn(command, args, { stdio: ['ignore', 'ignore', 'ignore'], ...options });
  cleanups.push(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await new Promise((r) => proc.once('exit', r));
    }
  });
  return proc;
}

export function tempDir(what) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `animal-store-bench-${what}-`));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// --- PgBouncer, Redis Cluster, Sentinel, an OTLP receiver ---------------------------------------

export async function startPgbouncer(serverUrl) {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username) || 'postgres';
  const port = await freePort();
  const dir = tempDir('pgbouncer');
  const ini = writePgbouncerIni(dir, { serverUrl, port });
  // In the foreground (its pid is ours to stop); as `postgres` when run as root (it refuses root).
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    execFileSync('chown', ['-R', 'postgres', dir]);
    chmodSync(dir, 0o755);
  }
  const proc = asRoot
    ? child('setpriv', ['--reuid=postgres', '--regid=postgres', '--clear-groups', 'pgbouncer', ini])
    : child('pgbouncer', [ini]);
  await until('pgbouncer to accept connections', async () => {
    const c = new pg.Client({ connectionString: `postgresql://${user}@127.0.0.1:${port}/${server.pathname.slice(1)}` });
    await c.connect();
    await c.end();
    return true;
  });
  log(`pgbouncer (pid ${proc.pid}) on 127.0.0.1:${port}`);
  return `postgresql://${encodeURIComponent(user)}@127.0.0.1:${port}${server.pathname}?pgbouncer=true`;
}

const cli = async (port, password, ...args) =>
  (
    await run('redis-cli', [
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      ...(password ? ['-a', password, '--no-auth-warning'] : []),
      ...args,
    ])
  ).stdout.trim();

export async function redisServer(dir, port, args) {
  child('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], {
    cwd: dir,
  });
  await until(`redis-server on ${port}`, async () => (await cli(port, undefined, 'ping')).length > 0);
}

export async function startCluster() {
  const password = randomBytes(8).toString('hex');
  const dir = tempDir('cluster');
  const ports = [];
  for (let i = 0; i < 6; i++) {
    const port = await freeClusterPort();
    ports.push(port);
    await redisServer(dir, port, [
      '--requirepass',
      password,
      '--masterauth',
      password,
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${port}.conf`,
    ]);
  }
  await run('redis-cli', [
    '-a',
    password,
    '--no-auth-warning',
    '--cluster',
    'create',
    ...ports.map((p) => `127.0.0.1:${p}`),
    '--cluster-replicas',
    '1',
    '--cluster-yes',
  ]);
  await until('the cluster to be ok', async () => {
    for (const p of ports) if (!(await cli(p, password, 'cluster', 'info')).includes('cluster_state:ok')) return false;
    return true;
  });
  log(`Redis Cluster on ${ports.join(', ')}`);
  return { REDIS_CLUSTER_NODES: ports.map((p) => `127.0.0.1:${p}`).join(','), REDIS_PASSWORD: password };
}

export async function startSentinel() {
  const password = randomBytes(8).toString('hex');
  const dir = tempDir('sentinel');
  const master = await freePort();
  await redisServer(dir, master, ['--requirepass', password, '--masterauth', password]);
  const replica = await freePort();
  await redisServer(dir, replica, [
    '--requirepass',
    password,
    '--masterauth',
    password,
    '--replicaof',
    '127.0.0.1',
    String(master),
  ]);
  const sentinels = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const file = writeSentinelConf(dir, { port, name: 'bench', masterPort: master, password });
    child('redis-server', [file, '--sentinel'], { cwd: dir });
    sentinels.push(port);
  }
  await until('the sentinels to know each other', async () => {
    for (const s of sentinels) {
      const info = (await cli(s, undefined, 'sentinel', 'master', 'bench')).split('\n');
      if (info[info.indexOf('num-other-sentinels') + 1] !== '2') return false;
    }
    return true;
  });
  log(`Redis master ${master}, replica ${replica}, sentinels ${sentinels.join(', ')}`);
  return {
    REDIS_SENTINELS: sentinels.map((p) => `127.0.0.1:${p}`).join(','),
    REDIS_SENTINEL_NAME: 'bench',
    REDIS_PASSWORD: password,
  };
}

/** An OTLP/HTTP receiver that reads each export and answers 200, counting spans. */
export async function startReceiver() {
  const received = { exports: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (chunk) => (received.bytes += chunk.length));
    req.on('end', () => {
      received.exports += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${server.address().port}`, received };
}
