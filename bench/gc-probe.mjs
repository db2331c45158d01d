// Preloaded into every server of `npm run bench` (node --import): garbage-collection pauses and
// event-loop delay over one measured load. Each SIGURG (a signal Node and the servers leave
// alone; SIGUSR1 opens the inspector, SIGUSR2 is cpu-profiler.mjs's, SIGPROF V8's) writes what
// was seen since the previous one to BENCH_GC_FILE and starts a new window, so the bench signals
// at the start of the measured run (discarding warm-up) and at its end (the figures it reports).
// The written JSON carries the signal's sequence number, so the bench knows it reads the fresh one.
// With BENCH_GC_HEAP=1 (the soak) it also writes, after each full (mark-compact) collection, the
// heap then in use to BENCH_GC_FILE.heap: what survives a full collection is what the process
// holds, so the soak tells a leak (that figure climbing) from a heap that only sizes itself (RSS
// up, that flat). Other runs skip that write, which would otherwise land in the measured loop.
// After each full collection it also notes the heap in use and the external memory (Buffers), so
// a window with many full collections shows whether they ran on a small heap (a tight old-space
// limit) or with much external memory (which V8 collects for). With BENCH_TRACE_GC=1 V8 also
// prints each collection with its reason, and each pretenuring decision (an allocation site
// whose objects it then allocates in old space), to the server's log (`--trace-gc` and
// `--trace-pretenuring`, which NODE_OPTIONS refuses), and the bench keeps the logs; with
// BENCH_TRACE_GC=nvp each collection's figures as name=value pairs (`--trace-gc-nvp`) instead.
import { writeFileSync } from 'node:fs';
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks';
import v8 from 'node:v8';

const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

if (process.env.BENCH_TRACE_GC === '1' || process.env.BENCH_TRACE_GC === 'nvp') {
  v8.setFlagsFromString('--trace-gc');
  v8.setFlagsFromString('--trace-pretenuring');
  // The per-site feedback and decisions (undecided, maybe tenure, tenure, don't tenure) print
  // only with this one, one line per active site and collection.
  v8.setFlagsFromString('--trace-pretenuring-statistics');
  if (process.env.BENCH_TRACE_GC === 'nvp') v8.setFlagsFromString('--trace-gc-nvp');
}

const MiB = 1024 * 1024;
let gc;
const reset = () => {
  gc = { count: 0, totalMs: 0, maxMs: 0, byKind: {}, afterMajor: null };
};
/** The heap in use and the external memory right after a full collection, as ranges over the window. */
const noteMajor = () => {
  const { used_heap_size: used, external_memory: external } = v8.getHeapStatistics();
  const a = (gc.afterMajor ??= { usedMiB: [Infinity, 0], externalMiB: [Infinity, 0] });
  a.usedMiB = [Math.min(a.usedMiB[0], used / MiB), Math.max(a.usedMiB[1], used / MiB)];
  a.externalMiB = [Math.min(a.externalMiB[0], external / MiB), Math.max(a.externalMiB[1], external / MiB)];
};
reset();
const record = (entries) => {
  for (const e of entries) {
    gc.count++;
    gc.totalMs += e.duration;
    if (e.duration > gc.maxMs) gc.maxMs = e.duration;
    const kind = KINDS[e.detail?.kind] ?? 'other';
    gc.byKind[kind] = (gc.byKind[kind] ?? 0) + 1;
  }
};
const HEAP_FILE =
  process.env.BENCH_GC_FILE && process.env.BENCH_GC_HEAP === '1' ? `${process.env.BENCH_GC_FILE}.heap` : null;
const observer = new PerformanceObserver((list) => {
  const entries = list.getEntries();
  record(entries);
  if (!entries.some((e) => e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) return;
  noteMajor();
  if (HEAP_FILE) {
    const heap = v8.getHeapStatistics();
    const { external, arrayBuffers } = process.memoryUsage();
    writeFileSync(
      HEAP_FILE,
      JSON.stringify({ usedBytes: heap.used_heap_size, totalBytes: heap.total_heap_size, external, arrayBuffers }),
    );
  }
});
observer.observe({ entryTypes: ['gc'] });

// The histogram records the whole interval between two ticks of a RESOLUTION_MS timer, so an idle
// loop reads RESOLUTION_MS; the snapshot subtracts it, leaving how late the ticks ran.
const RESOLUTION_MS = 10;
const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
delay.enable();
let started = process.hrtime.bigint();
let seq = 0;

process.on('SIGURG', () => {
  record(observer.takeRecords()); // entries not yet delivered to the callback
  const ms = (ns) => Math.max(0, Math.round(ns / 1e4) / 100 - RESOLUTION_MS);
  const now = process.hrtime.bigint();
  const snapshot = {
    seq: ++seq,
    windowMs: Number(now - started) / 1e6,
    gc: {
      ...gc,
      totalMs: Math.round(gc.totalMs * 100) / 100,
      maxMs: Math.round(gc.maxMs * 100) / 100,
      afterMajor: gc.afterMajor && {
        usedMiB: gc.afterMajor.usedMiB.map((n) => Math.round(n * 10) / 10),
        externalMiB: gc.afterMajor.externalMiB.map((n) => Math.round(n * 10) / 10),
      },
    },
    eventLoopDelayMs: {
      p50: ms(delay.percentile(50)),
      p99: ms(delay.percentile(99)),
      max: ms(delay.max),
      mean: ms(delay.mean),
    },
  };
  if (process.env.BENCH_GC_FILE) writeFileSync(process.env.BENCH_GC_FILE, JSON.stringify(snapshot));
  reset();
  delay.reset();
  started = now;
});
