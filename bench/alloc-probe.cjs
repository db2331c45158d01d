// Preloaded into a server (node -r bench/alloc-probe.cjs dist/main.js): V8's sampling heap
// profiler, counting every sampled allocation including what the GC has already collected (the
// garbage a request leaves is what costs GC time), between SIGUSR1 (start) and SIGUSR2 (stop,
// written to ALLOC_PROFILE or ./alloc.heapprofile.json). Node's --heap-prof keeps only what is
// still alive at exit, which says nothing about garbage. With ALLOC_LIVE=1 the profile keeps only
// what is still in the heap when SIGUSR2 arrives: stopped under load, before a major GC, that is
// what survived the scavenges (promoted to the old space), the garbage that makes scavenges slow.
'use strict';
const inspector = require('node:inspector');
const fs = require('node:fs');

const live = process.env.ALLOC_LIVE === '1';
const session = new inspector.Session();
session.connect();
session.post('HeapProfiler.enable');
process.on('SIGUSR1', () => {
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: !live,
    includeObjectsCollectedByMinorGC: !live,
  });
});
process.on('SIGUSR2', () => {
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) return console.error(`alloc-probe: ${err.message}`);
    fs.writeFileSync(process.env.ALLOC_PROFILE || 'alloc.heapprofile.json', JSON.stringify(result.profile));
  });
});
