import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './local-servers.mjs';
import { watchChild } from './child-process.js';
import { waitFor } from './wait-for.js';

/** The balancer's configuration as shipped (docs/deployment.md, "Rolling deploys behind HAProxy"). */
export const HAPROXY_CONFIG = path.resolve('deploy/haproxy/haproxy.cfg');

/** One server's line of HAProxy's `show stat`, with the columns the cluster test reads. */
export interface ServerStat {
  /** UP, DOWN, MAINT, or a transition such as "UP 1/2" (going down) and "DOWN 1/2" (going up). */
  status: string;
  /** Retries and redispatches of requests meant for this server; connection and response errors. */
  wretr: number;
  wredis: number;
  econ: number;
  eresp: number;
  /** Sessions (requests) the server was given. */
  stot: number;
  /** Sessions (requests) the server holds now: given to it and not yet answered. */
  scur: number;
}

export interface RunningHaproxy {
  /** Where clients connect: the `api` frontend. */
  url: string;
  port: number;
  /** The stats frontend: `/metrics` (HAProxy's Prometheus exporter) and `/stats`. */
  statsUrl: string;
  output(): string;
  /** The servers of backend `app` by name (app1, app2), and the backend's own line. */
  stats(): Promise<{ servers: Map<string, ServerStat>; backend: ServerStat }>;
  /** A command on the admin socket (e.g. `set server app/app1 state drain`); its answer. */
  command(command: string): Promise<string>;
  stop(): Promise<void>;
}

/** Fails with a clear message when HAProxy is not installed (CI installs Debian's package). */
export function haproxyVersion(): string {
  try {
    return execFileSync('haproxy', ['-v'], { encoding: 'utf8' }).split('\n')[0];
  } catch {
    throw new Error('haproxy is not installed: `apt-get install -y haproxy` (Debian bookworm: 2.6), then run again');
  }
}

/** Sends one command to HAProxy's admin socket and returns its whole answer. */
function socketCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const conn = net.createConnection(socket, () => conn.end(`${command}\n`));
    conn.setEncoding('utf8');
    conn.setTimeout(5000, () => conn.destroy(new Error(`no answer from HAProxy's socket to "${command}"`)));
    conn.on('data', (d: string) => (answer += d));
    conn.on('end', () => resolve(answer));
    conn.on('error', reject);
  });
}

function parseStat(csv: string): { servers: Map<string, ServerStat>; backend?: ServerStat } {
  const [header, ...rows] = csv.split('\n').filter((l) => l.trim() !== '');
  const columns = header.replace(/^# /, '').split(',');
  const col = (name: string) => columns.indexOf(name);
  const servers = new Map<string, ServerStat>();
  let backend: ServerStat | undefined;
  for (const row of rows) {
    const f = row.split(',');
    if (f[col('pxname')] !== 'app') continue;
    const stat: ServerStat = {
      status: f[col('status')],
      wretr: Number(f[col('wretr')] || 0),
      wredis: Number(f[col('wredis')] || 0),
      econ: Number(f[col('econ')] || 0),
      eresp: Number(f[col('eresp')] || 0),
      stot: Number(f[col('stot')] || 0),
      scur: Number(f[col('scur')] || 0),
    };
    if (f[col('svname')] === 'BACKEND') backend = stat;
    else servers.set(f[col('svname')], stat);
  }
  return { servers, backend };
}

/**
 * HAProxy with the shipped configuration, in the foreground, its ports and server addresses
 * substituted through the environment the configuration reads (HAPROXY_BIND, APPn_ADDR, …).
 * HAPROXY_CHECK_* set around the test reach it too, to try other check timings; `env` sets
 * other variables the configuration reads (HAPROXY_TIMEOUT_SERVER, …).
 */
export async function startHaproxy(
  servers: { app1: string; app2: string },
  env: Record<string, string> = {},
): Promise<RunningHaproxy> {
  haproxyVersion();
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-haproxy-'));
  const socket = path.join(dir, 'admin.sock');
  const statsPort = await freePort();
  const passThrough = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k.startsWith('HAPROXY_CHECK_')),
  ) as Record<string, string>;
  const child: ChildProcess = spawn('haproxy', ['-db', '-f', HAPROXY_CONFIG], {
    env: {
      PATH: process.env.PATH ?? '',
      ...passThrough,
      ...env,
      HAPROXY_BIND: `127.0.0.1:${port}`,
      HAPROXY_STATS_BIND: `127.0.0.1:${statsPort}`,
      HAPROXY_STATS_SOCKET: socket,
      APP1_ADDR: servers.app1,
      APP2_ADDR: servers.app2,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watched = watchChild(child);

  const stats = async () => {
    const { servers: s, backend } = parseStat(await socketCommand(socket, 'show stat'));
    if (!backend) throw new Error('HAProxy reported no backend "app"');
    return { servers: s, backend };
  };
  // Started when its admin socket answers.
  try {
    await waitFor(async () => watched.done() || (await stats()), {
      what: "HAProxy's admin socket to answer",
      intervalMs: 50,
    });
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`haproxy did not start: ${(err as Error).message}\n${watched.output()}`, { cause: err });
  }
  if (watched.done()) throw new Error(`haproxy exited at start:\n${watched.output()}`);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    statsUrl: `http://127.0.0.1:${statsPort}`,
    output: watched.output,
    stats,
    command: (command: string) => socketCommand(socket, command),
    async stop() {
      await watched.stop('SIGTERM', 5000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
