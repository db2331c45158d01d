// BENCH_SCHED=1: which processes had the CPUs while a fixed-rate run's slowest requests fell due.
// Run as a script, this file reads every process's /proc/<pid>/schedstat every SAMPLE_MS (its
// main thread's time on a CPU and time waiting in a run queue, in nanoseconds) and writes what
// changed as JSON lines: { t: Date.now(), d: { pid: [runUs, waitUs] } }, and a process's name
// (/proc/<pid>/comm) the first time it is seen. For the server's process it also sums its other
// threads (V8's collector and compiler threads, libuv's pool) under the key `threads`.
// bench/load.mjs starts it around each fixed-rate run (startSchedProbe) and, for each of the
// run's busiest windows of slow requests, sums what each other process ran and how long the
// server waited for a CPU (cpuAround). On the 2-core machine a stall the server did not cause
// shows as another process's burst, with the server waiting (bench/results/README.md). The probe
// takes CPU itself (it is named in the report).
/* global setTimeout */
import { spawn } from 'node:child_process';
import { openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../test/support/local-servers.mjs';

/** How often the probe reads /proc: a window of 100 ms holds about five readings. */
export const SAMPLE_MS = 20;

/** The probe's readings as parsed from its file: each process's name, and the changes by time. */
export function parseSamples(text) {
  const names = new Map();
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let row;
    try {
      row = JSON.parse(line);
    } catch {
      continue; // the last line, cut short when the probe was stopped
    }
    if (row.names) for (const [pid, name] of Object.entries(row.names)) names.set(Number(pid), name);
    if (row.d) samples.push({ t: row.t, d: row.d });
  }
  return { names, samples };
}

/**
 * What ran in the readings taken after `fromMs` and up to `toMs` (Date.now() times), in ms: the
 * server's main thread on a CPU and in a run queue, its other threads on a CPU, and every other
 * process on a CPU, summed by name (PostgreSQL's backends are one `postgres`), the most first.
 * The bench's own process is `bench (load generator)`, the probe `sched probe`.
 */
export function cpuAround({ names, samples }, fromMs, toMs, serverPid, benchPid, probePid) {
  let serverRunUs = 0;
  let serverWaitUs = 0;
  let threadsRunUs = 0;
  const byName = new Map();
  for (const { t, d } of samples) {
    if (t <= fromMs || t > toMs) continue;
    for (const [key, [runUs, waitUs]] of Object.entries(d)) {
      if (key === 'threads') {
        threadsRunUs += runUs;
        continue;
      }
      const pid = Number(key);
      if (pid === serverPid) {
        serverRunUs += runUs;
        serverWaitUs += waitUs;
        continue;
      }
      const name =
        pid === benchPid
          ? 'bench (load generator)'
          : pid === probePid
            ? 'sched probe'
            : (names.get(pid) ?? `pid ${pid}`);
      byName.set(name, (byName.get(name) ?? 0) + runUs);
    }
  }
  const ms = (us) => Math.round(us / 100) / 10;
  return {
    serverRunMs: ms(serverRunUs),
    serverWaitMs: ms(serverWaitUs),
    serverThreadsMs: ms(threadsRunUs),
    others: [...byName]
      .filter(([, us]) => us > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ name, ms: ms(us) })),
  };
}

/**
 * Starts the probe writing to `file`, summing the threads of `serverPid`'s process besides its
 * main one; resolves once its first reading is written. stop() ends it and resolves with its
 * readings (parseSamples).
 */
export async function startSchedProbe(file, serverPid) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), file, String(serverPid ?? '')], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await waitFor(() => child.exitCode !== null || readable(file), {
      what: `the sched probe's first reading in ${file}`,
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    if (child.exitCode !== null) throw new Error(`the sched probe exited (${child.exitCode}) before its first reading`);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      return parseSamples(readFileSync(file, 'utf8'));
    },
  };
}

function readable(file) {
  try {
    return readFileSync(file, 'utf8').includes('\n');
  } catch {
    return false;
  }
}

/** The times on a CPU and waiting of a process's or thread's schedstat file, in ns; null when it is gone. */
function schedstat(file) {
  try {
    const fields = readFileSync(file, 'utf8').split(' ');
    return [Number(fields[0]), Number(fields[1])];
  } catch {
    return null;
  }
}

/** The probe itself: readings every SAMPLE_MS until it is sent SIGTERM (or its parent is gone). */
function run(file, serverPid) {
  const out = openSync(file, 'w');
  const last = new Map();
  const lastThreads = new Map();
  let threadsRead = false;
  const parent = process.ppid;
  /**
   * The server's threads but its main one: the µs each ran and waited since the last reading,
   * summed; a thread started since then counts from its start.
   */
  const threads = () => {
    let runUs = 0;
    let waitUs = 0;
    let tids;
    try {
      tids = readdirSync(`/proc/${serverPid}/task`);
    } catch {
      return null;
    }
    for (const tid of tids) {
      if (tid === serverPid) continue;
      const now = schedstat(`/proc/${serverPid}/task/${tid}/schedstat`);
      if (now === null) continue;
      const before = lastThreads.get(tid) ?? (threadsRead ? [0, 0] : now);
      runUs += (now[0] - before[0]) / 1000;
      waitUs += (now[1] - before[1]) / 1000;
      lastThreads.set(tid, now);
    }
    threadsRead = true;
    return runUs > 0 || waitUs > 0 ? [Math.round(runUs), Math.round(waitUs)] : null;
  };
  const read = () => {
    const t = Date.now();
    const d = {};
    const names = {};
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid)) continue;
      const now = schedstat(`/proc/${pid}/schedstat`);
      if (now === null) continue; // gone since the listing
      const [onCpu, waiting] = now;
      const before = last.get(pid);
      if (before === undefined) {
        try {
          names[pid] = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
        } catch {
          names[pid] = `pid ${pid}`;
        }
      } else if (onCpu !== before[0] || waiting !== before[1]) {
        d[pid] = [Math.round((onCpu - before[0]) / 1000), Math.round((waiting - before[1]) / 1000)];
      }
      last.set(pid, now);
    }
    if (serverPid) {
      const sum = threads();
      if (sum !== null) d.threads = sum;
    }
    writeSync(out, `${JSON.stringify(Object.keys(names).length > 0 ? { t, d, names } : { t, d })}\n`);
    try {
      process.kill(parent, 0);
    } catch {
      process.exit(0);
    }
    setTimeout(read, SAMPLE_MS);
  };
  process.once('SIGTERM', () => process.exit(0));
  read();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) run(process.argv[2], process.argv[3]);
