// The load: one run (autocannon at capacity, bench/paced.mjs at a fixed rate) with the server's
// memory and CPU sampled meanwhile, and a measured run (warm-up, then the load inside a window of
// bench/gc-probe.mjs, optionally under V8's CPU profiler).
/* global setInterval, clearInterval */
import autocannon from 'autocannon';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { paced, pacedPool, SLOW_WINDOW_MS } from './paced.mjs';
import { cpuSplitOf, infraCpu, infraCpuSince, memoryOf, pgSessions, redisScriptCount } from './processes.mjs';
import { linesSince, logOffset } from './log-lines.mjs';
import { sessionsSince } from './pg-sessions.mjs';
import { cpuAround, startSchedProbe } from './sched-probe.mjs';
import { perfProfile, startPerf } from './perf-profile.mjs';
import { CONNECTIONS, DURATION, FIRST_WARMUP, PERF, PERF_DIR, RUN_ID, SCHED, WARMUP, WORK, log } from './settings.mjs';

/** Seconds from a UTC minute's start in which the slowest-window line marks a window. */
const MINUTE_START_S = 3;

/**
 * One run against a server, with the server's memory and CPU sampled meanwhile, and the CPU
 * PostgreSQL and Redis used. `rate` 0: autocannon, each connection sending its next request as
 * soon as the last is answered (capacity). `rate` > 0: bench/paced.mjs, that many requests a
 * second evenly spaced over up to CONNECTIONS connections, latency from each request's due time;
 * autocannon's own rate limit would send each second's requests in a burst at its start.
 * `sched` (at a fixed rate): bench/sched-probe.mjs runs meanwhile, and each of the busiest windows
 * of slow requests gets what ran then (`sched`). `shared`: other servers run meanwhile
 * (BENCH_TOGETHER), so PostgreSQL's and Redis's CPU, the scripts and the connections are not this
 * server's alone, and are null.
 */
export async function load(server, scenario, key, seconds, { rate = 0, pool, sched = false, shared = false } = {}) {
  let peakRss = 0;
  const sample = () => {
    const m = memoryOf(server.child.pid);
    if (m) peakRss = Math.max(peakRss, m.rss);
  };
  const scripts0 = shared ? null : await redisScriptCount();
  const sessions0 = shared ? null : await pgSessions();
  const timer = setInterval(sample, 100);
  const cpu0 = cpuSplitOf(server.child.pid);
  const infra0 = shared ? null : infraCpu();
  const log0 = server.name === 'service' ? logOffset(server.logFile) : 0;
  const probe =
    sched && rate > 0
      ? await startSchedProbe(path.join(WORK, `${RUN_ID}-${server.name}-sched.jsonl`), server.child.pid)
      : null;
  const options = {
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${key}` },
  };
  let result;
  try {
    result =
      rate > 0
        ? await paced({ ...options, rate, request: scenario.request, pool })
        : await autocannon({ ...options, requests: [scenario.request] });
  } catch (err) {
    await probe?.stop();
    throw err;
  }
  // Read at once: the RSS the load left behind, before the process has idled and given any back.
  const after = memoryOf(server.child.pid);
  const cpu1 = cpuSplitOf(server.child.pid);
  const infra = shared ? { postgres: null, redis: null } : infraCpuSince(infra0);
  clearInterval(timer);
  const scripts1 = shared ? null : await redisScriptCount();
  const sessions = shared ? null : sessionsSince(sessions0, await pgSessions());
  if (probe) {
    // What ran from a window's start to the end of the next: a stall slows the requests due in
    // the window it starts in and in those after it, until the server has caught up.
    const samples = await probe.stop();
    for (const w of result.slowest.busiest) {
      const from = result.startedAtMs + w.atMs;
      w.sched = cpuAround(samples, from, from + 2 * SLOW_WINDOW_MS, server.child.pid, process.pid, probe.pid);
    }
  }
  sample();
  const total = result.requests.total;
  return {
    reqPerSec: Math.round(result.requests.average),
    requests: total,
    // No latency when no response came back within the run (both report zeros then).
    p50Ms: total ? result.latency.p50 : null,
    p90Ms: total ? result.latency.p90 : null,
    p99Ms: total ? result.latency.p99 : null,
    p999Ms: total ? result.latency.p99_9 : null,
    maxMs: total ? result.latency.max : null,
    // At a fixed rate, how late bench/paced.mjs sent requests after their due time: the
    // generator's own share of each latency (null for autocannon).
    sendLagP50Ms: result.sendLag ? result.sendLag.p50 : null,
    sendLagP99Ms: result.sendLag ? result.sendLag.p99 : null,
    // At a fixed rate, the windows of SLOW_WINDOW_MS of due time holding the slowest 1% of the responses
    // (paced.mjs, slowestWindows): a p99 made of a few stalls, or spread over the run.
    slowWindows: result.slowest ? result.slowest.windows : null,
    slowBusiest: result.slowest ? result.slowest.busiest : null,
    // PostgreSQL connections any server opened and closed during the run (pgSessions).
    pgOpened: sessions ? sessions.opened : null,
    pgClosed: sessions ? sessions.closed : null,
    // Requests with no response; both generators count their timeouts among their errors.
    errors: result.errors,
    non2xx: result.non2xx,
    status2xx: result['2xx'],
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]),
    ),
    rssAfterMiB: after ? Math.round(after.rss) : null,
    peakRssMiB: peakRss ? Math.round(peakRss) : null,
    cpuUsPerReq:
      cpu0 !== null && cpu1 !== null && total > 0
        ? Math.round(((cpu1.userMs + cpu1.systemMs - cpu0.userMs - cpu0.systemMs) * 1000) / total)
        : null,
    // Of it, the kernel's time on the server's behalf (system time): its reads and writes.
    kernelUsPerReq:
      cpu0 !== null && cpu1 !== null && total > 0 ? Math.round(((cpu1.systemMs - cpu0.systemMs) * 1000) / total) : null,
    pgCpuUsPerReq: infra.postgres !== null && total > 0 ? Math.round((infra.postgres * 1000) / total) : null,
    redisCpuUsPerReq: infra.redis !== null && total > 0 ? Math.round((infra.redis * 1000) / total) : null,
    redisScriptsPerReq:
      scripts0 !== null && scripts1 !== null && total > 0
        ? Math.round(((scripts1 - scripts0) / total) * 1000) / 1000
        : null,
    logLinesPerReq:
      server.name === 'service' && total > 0
        ? Math.round((linesSince(server.logFile, log0) / total) * 100) / 100
        : null,
  };
}

/** Waits for a file a server writes on a signal; `accept` says whether its content is the fresh one. */
export async function awaitFile(file, accept, what) {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    try {
      const text = readFileSync(file, 'utf8');
      if (accept(text)) return text;
    } catch {
      /* not written yet, or half written */
    }
    await sleep(50);
  }
  throw new Error(`${what}: ${file} was not written`);
}

/**
 * Ends a window of bench/gc-probe.mjs and returns what it saw since the previous signal: the
 * probe writes a snapshot numbered by the signals it has had.
 */
export async function gcWindow(server) {
  server.gcSeq = (server.gcSeq ?? 0) + 1;
  server.child.kill('SIGURG');
  const want = server.gcSeq;
  const text = await awaitFile(
    server.gcFile,
    (t) => {
      try {
        return JSON.parse(t).seq === want;
      } catch {
        return false;
      }
    },
    `${server.name} GC probe`,
  );
  const snapshot = JSON.parse(text);
  delete snapshot.seq;
  return snapshot;
}

/**
 * A measured run: warm-up, then the probe's window opened, the load, the window closed, both at
 * `rate` (0: as fast as the server answers). With `profile`, V8's CPU profiler runs during the
 * load (bench/cpu-profiler.mjs) and the run returns the profile as well.
 */
export async function measure(
  server,
  scenario,
  key,
  { profile = false, quiet = false, rate = 0, shared = false } = {},
) {
  // At a fixed rate the measured run goes on over the warm-up's connections: opening 64 at its
  // start would put each server's cost of a burst of new connections into its p99.
  const pool = rate > 0 ? pacedPool(server.url, CONNECTIONS) : undefined;
  try {
    return await measureOver(server, scenario, key, { profile, quiet, rate, pool, shared });
  } finally {
    await pool?.destroy().catch(() => {});
  }
}

async function measureOver(server, scenario, key, { profile, quiet, rate, pool, shared }) {
  const warmupSeconds = server.measured ? WARMUP : FIRST_WARMUP;
  server.measured = true;
  const warmup = warmupSeconds > 0 ? await load(server, scenario, key, warmupSeconds, { rate, pool, shared }) : null;
  await gcWindow(server); // discards the warm-up's pauses
  const perfFile = path.join(WORK, `${RUN_ID}-${server.tag}-${scenario.name}.perf.data`);
  const perf = profile && PERF ? await startPerf(server.child.pid, perfFile) : null;
  if (profile && !PERF) {
    rmSync(server.profileFile, { force: true });
    server.child.kill('SIGUSR2'); // starts the profiler
  }
  // A scenario's fixedSeconds lengthens its measured runs at the fixed rate; the profiled runs
  // keep DURATION, which bounds the bench's time (the ledger reads shares of the run).
  const seconds = rate > 0 && !profile ? (scenario.fixedSeconds ?? DURATION) : DURATION;
  // The warm-up's windows are not reported, so only the measured run is probed (BENCH_SCHED).
  const r = await load(server, scenario, key, seconds, { rate, pool, sched: SCHED, shared });
  r.rate = rate;
  r.seconds = seconds;
  if (perf) await perf.stop();
  else if (profile) server.child.kill('SIGUSR2'); // stops it and writes the profile
  r.loop = await gcWindow(server);
  r.warmup = warmup && {
    requests: warmup.requests,
    errors: warmup.errors,
    non2xx: warmup.non2xx,
    statusCodes: warmup.statusCodes,
  };
  if (perf) {
    r.profile = await perfProfile(perfFile, PERF_DIR);
    rmSync(perfFile, { force: true });
    r.profileFile = path.join(WORK, `${RUN_ID}-${server.tag}-${scenario.name}.cpuprofile`);
    writeFileSync(r.profileFile, JSON.stringify(r.profile));
  } else if (profile) {
    const text = await awaitFile(
      server.profileFile,
      (t) => {
        try {
          JSON.parse(t);
          return true;
        } catch {
          return false;
        }
      },
      `${server.name} CPU profile`,
    );
    r.profile = JSON.parse(text);
    // One file per profiled scenario: the profiler writes to the same path every time.
    r.profileFile = path.join(WORK, `${RUN_ID}-${server.tag}-${scenario.name}.cpuprofile`);
    renameSync(server.profileFile, r.profileFile);
  }
  if (!quiet)
    log(
      `${scenario.name.padEnd(25)} ${server.tag.padEnd(12)} ${rate > 0 ? `at ${rate}: ` : ''}${r.reqPerSec} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms${slowest(r)}, ` +
        `non-2xx ${r.non2xx}, errors ${r.errors}, RSS ${r.rssAfterMiB} MiB, ${r.cpuUsPerReq} µs/req` +
        `${r.kernelUsPerReq !== null ? ` (${r.kernelUsPerReq} in the kernel)` : ''}` +
        `${r.pgCpuUsPerReq !== null ? ` (+ PostgreSQL ${r.pgCpuUsPerReq}, Redis ${r.redisCpuUsPerReq ?? '–'})` : ''}` +
        `${r.redisScriptsPerReq ? `, Redis scripts ${r.redisScriptsPerReq}/req` : ''}` +
        `${r.pgOpened || r.pgClosed ? `, PostgreSQL connections opened ${r.pgOpened}, closed ${r.pgClosed}` : ''}, ` +
        `GC ${r.loop.gc.count}× ${Math.round(r.loop.gc.totalMs)} ms${fullCollections(r.loop.gc)}${profile ? ' (profiled)' : ''}`,
    );
  return r;
}

/** Where a fixed-rate run's slowest 1% fell due: how many SLOW_WINDOW_MS windows, and the busiest (at seconds). */
function slowest(r) {
  if (!r.slowWindows) return '';
  const busiest = r.slowBusiest
    .slice(0, 3)
    .map((w) => `${w.requests} at ${(w.atMs / 1000).toFixed(1)} s${minuteMark(w)}${ran(w.sched)}`);
  return ` (slowest 1% in ${r.slowWindows} windows of ${SLOW_WINDOW_MS} ms; most: ${busiest.join(', ')})`;
}

/** A window in the first seconds of a UTC minute, marked with its second (`(:01)`): the minute's lease renewals. */
function minuteMark(w) {
  return w.secondOfMinute !== undefined && w.secondOfMinute < MINUTE_START_S
    ? ` (:${String(w.secondOfMinute).padStart(2, '0')})`
    : '';
}

/** With BENCH_SCHED: the server's time on a CPU and waiting for one there, and the others that ran most. */
function ran(sched) {
  if (!sched) return '';
  const others = sched.others.slice(0, 4).map((o) => `${o.name} ${o.ms}`);
  return (
    ` [ran ${sched.serverRunMs} ms (its other threads ${sched.serverThreadsMs}), waited ${sched.serverWaitMs} ms` +
    ` for a CPU; others: ${others.join(', ')} ms]`
  );
}

/** The run's full collections, with the heap in use and the external memory after them (gc-probe.mjs). */
function fullCollections(gc) {
  const n = gc.byKind?.major ?? 0;
  if (n === 0 || !gc.afterMajor) return '';
  const range = ([lo, hi]) => (lo === hi ? `${lo}` : `${lo}-${hi}`);
  return ` (${n} full: heap ${range(gc.afterMajor.usedMiB)} MiB after, external ${range(gc.afterMajor.externalMiB)} MiB)`;
}
