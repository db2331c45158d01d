#!/usr/bin/env node
// A server log written with BENCH_TRACE_GC=nvp, summarised per window of time: how many
// scavenges and full (mark-compact) collections ran, what each scavenge promoted into old space
// and kept in new space on average, the new space's capacity and the old-space limit at the
// window's end, and V8's decisions to pretenure a literal (allocate its objects in old space).
// Usage: node bench/gc-trace.mjs <.tmp/bench-work/<run>-<server>.log> [window seconds, 2]
import { readFileSync } from 'node:fs';

const [file, windowArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/gc-trace.mjs <server log written with BENCH_TRACE_GC=nvp> [window seconds]');
  process.exit(2);
}
const windowMs = Number(windowArg ?? 2) * 1000;
const MB = (bytes) => (bytes / 1e6).toFixed(1);

const windows = [];
let current = null;
// V8 prints a collection's pretenuring decisions during it, before the collection's own line.
let tenured = 0;
for (const line of readFileSync(file, 'utf8').split('\n')) {
  // "[pid:isolate:gc#]   1234 ms: pause=… gc=s …" (one per collection), and
  // "[pid:isolate] pretenuring: AllocationSite(…): (created, found, ratio) (…) undecided => tenure"
  const gc = /^\[[^\]]+\]\s+(\d+) ms: (.* gc=(s|mc) .*)$/.exec(line);
  if (gc) {
    const start = Math.floor(Number(gc[1]) / windowMs) * windowMs;
    if (current?.start !== start) {
      current = { start, scavenges: 0, full: 0, promoted: 0, survived: 0, capacity: 0, limit: 0, tenured: 0 };
      windows.push(current);
    }
    current.tenured += tenured;
    tenured = 0;
    const field = (name) => Number(new RegExp(` ${name}=(\\d+)`).exec(gc[2])?.[1] ?? 0);
    if (gc[3] === 's') {
      current.scavenges++;
      current.promoted += field('promoted');
      current.survived += field('new_space_survived');
    } else current.full++;
    current.capacity = field('new_space_capacity');
    current.limit = field('old_gen_allocation_limit');
  } else if (/pretenuring: AllocationSite.*=> tenure$/.test(line) && !/ tenure => tenure$/.test(line)) {
    tenured++;
  }
}
console.log(
  '   at s  scavenges  full  promoted/scavenge MB  kept young/scavenge MB  new space MB  old limit MB  pretenured',
);
for (const w of windows) {
  const per = (bytes) => (w.scavenges ? MB(bytes / w.scavenges) : '-');
  console.log(
    `${String(w.start / 1000).padStart(7)}  ${String(w.scavenges).padStart(9)}  ${String(w.full).padStart(4)}  ${per(w.promoted).padStart(20)}  ${per(w.survived).padStart(22)}  ${MB(w.capacity).padStart(12)}  ${MB(w.limit).padStart(12)}  ${String(w.tenured || '').padStart(10)}`,
  );
}
