// The bench's processes: the registry of what must be released at the end (also on failure
// or a signal), and the servers it starts, with their memory and CPU read from /proc.
/* global fetch, AbortSignal, setTimeout, clearTimeout */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { perfNodeFlags } from './perf-profile.mjs';
import { SessionCounter } from './pg-sessions.mjs';
import {
  CPU_PROFILER,
  GC_PROBE,
  NODE_BIN,
  PERF,
  PERF_DIR,
  PG_ADMIN_URL,
  REDIS_URL,
  ROOT,
  RUN_ID,
  TRACE_GC,
  WORK,
  log,
} from './settings.mjs';

/** Releases run in reverse order of registration by cleanup(). */
export const cleanups = [];
export const children = new Set();
let cleaningUp = false;

export async function cleanup() {
  if (cleaningUp) return;
  cleaningUp = true;
  await Promise.all([...children].map((c) => stopProcess(c)));
  for (const fn of cleanups.reverse()) {
    try {
      await fn();
    } catch (err) {
      console.error(`clean-up: ${err instanceof Error ? err.message : err}`);
    }
  }
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

export async function stopProcess(child, signal = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child);
    return;
  }
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
  children.delete(child);
}

/** VmRSS and VmHWM (peak) of a process in MiB, from /proc (Linux); null elsewhere. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in ms; null where /proc is missing. */
export function cpuMsOf(pid) {
  const split = cpuSplitOf(pid);
  return split && split.userMs + split.systemMs;
}

/**
 * CPU time a process has used so far, in ms, apart: in its own code (user) and in the kernel on
 * its behalf (system: its system calls, the loopback network's work done in them); null where
 * /proc is missing.
 */
export function cpuSplitOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, in ticks of USER_HZ (100 on Linux).
    return { userMs: Number(fields[11]) * 10, systemMs: Number(fields[12]) * 10 };
  } catch {
    return null;
  }
}

/**
 * CPU time (ms) of every process on this machine named `postgres` and `redis-server`, by pid: the
 * database's backends and its background workers, and Redis. Read before and after a run, the
 * difference is what serving that run cost them (the bench runs one server at a time). Empty
 * when they run elsewhere (another host, a container's own PID namespace shows them too).
 */
export function infraCpu() {
  const found = { postgres: new Map(), redis: new Map() };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let comm;
    try {
      comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue; // exited meanwhile
    }
    const group = comm === 'postgres' ? found.postgres : comm === 'redis-server' ? found.redis : null;
    if (!group) continue;
    const ms = cpuMsOf(entry);
    if (ms !== null) group.set(entry, ms);
  }
  return found;
}

/**
 * The CPU ms each group used between two infraCpu() readings, null for a group with no process.
 * A process that started meanwhile counts whole; one that ended meanwhile is lost (the servers'
 * pools keep their connections open for the whole run).
 */
export function infraCpuSince(before, after = infraCpu()) {
  const used = (a, b) => {
    if (b.size === 0) return null;
    let ms = 0;
    for (const [pid, now] of b) ms += now - (a.get(pid) ?? 0);
    return ms;
  };
  return { postgres: used(before.postgres, after.postgres), redis: used(before.redis, after.redis) };
}

/** The connection redisScriptCount() reads on (null: Redis did not answer; not tried again). */
let statsConnection;

/**
 * The scripts Redis has run so far (INFO commandstats: EVALSHA and EVAL calls, which count the
 * commands a script runs apart), read on one connection kept for the run; null without a Redis
 * to ask. Read before and after a run, the difference is the round trips the service's rate
 * limiter made (bench scenario listPetsManyKeys: how many requests the leases spare).
 */
export async function redisScriptCount() {
  if (statsConnection === undefined) {
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableReadyCheck: false,
      connectTimeout: 1000,
      retryStrategy: () => null,
    });
    redis.on('error', () => {});
    try {
      await redis.connect();
      statsConnection = redis;
      cleanups.push(() => redis.disconnect());
    } catch {
      redis.disconnect();
      statsConnection = null;
    }
  }
  if (statsConnection === null) return null;
  try {
    const info = await statsConnection.info('commandstats');
    let calls = 0;
    for (const [, n] of info.matchAll(/^cmdstat_(?:evalsha|eval|evalsha_ro|eval_ro):calls=(\d+)/gm)) calls += Number(n);
    return calls;
  } catch {
    return null;
  }
}

let sessionCounter;
/**
 * PostgreSQL's sessions so far (bench/pg-sessions.mjs) on one connection kept for the run; null
 * without a PostgreSQL 14 or later to ask. Read before and after a run, sessionsSince says how
 * many connections any server opened and closed meanwhile.
 */
export async function pgSessions() {
  if (sessionCounter === undefined) {
    const counter = new SessionCounter(PG_ADMIN_URL);
    sessionCounter = (await counter.start()) ? counter : null;
    if (sessionCounter) cleanups.push(() => counter.close());
  }
  return sessionCounter === null ? null : sessionCounter.read();
}

export async function get(url, headers = {}) {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/**
 * Starts `node <args>` with output to a log file, the GC probe (and with `profile` the CPU
 * profiler) preloaded; resolves once /readyz answers 200. `name` is the server's role (raw,
 * service, …); `tag` names its files when two servers of one role run in a bench (aged data).
 */
export async function startServer(name, args, env, port, { profile = false, tag = name } = {}) {
  const logFile = path.join(WORK, `${RUN_ID}-${tag}.log`);
  const gcFile = path.join(WORK, `${RUN_ID}-${tag}.gc.json`);
  const profileFile = path.join(WORK, `${RUN_ID}-${tag}.cpuprofile`);
  const fd = openSync(logFile, 'w');
  const t0 = performance.now();
  // A profiled server takes V8's profiler, or with BENCH_PERF the flags `perf` needs (V8 then
  // writes its jitdump and log files in PERF_DIR).
  if (profile && PERF) mkdirSync(PERF_DIR, { recursive: true });
  const profiler = !profile ? [] : PERF ? perfNodeFlags(PERF_DIR, NODE_BIN) : ['--import', CPU_PROFILER];
  const child = spawn(NODE_BIN, [...profiler, '--import', GC_PROBE, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      BENCH_GC_FILE: gcFile,
      ...(TRACE_GC ? { BENCH_TRACE_GC: TRACE_GC } : {}),
      ...(profile ? { BENCH_PROFILE_FILE: profileFile } : {}),
      ...env,
    },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  children.add(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) {
        const readyMs = performance.now() - t0;
        log(`${tag} ready on ${url} in ${Math.round(readyMs)} ms (pid ${child.pid})`);
        return { name, tag, child, url, port, logFile, gcFile, profileFile: profile ? profileFile : null, readyMs };
      }
    } catch {
      /* not listening yet */
    }
    await sleep(20);
  }
  const tail = readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
  throw new Error(
    `${tag} did not become ready (exit ${child.exitCode ?? child.signalCode ?? 'none'}); its output:\n${tail}`,
  );
}
