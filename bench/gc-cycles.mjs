#!/usr/bin/env node
// `npm run bench:gc-cycles`: how often a fresh service process falls into the pretenuring state
// (docs/performance.md, "Pretenuring"). Starts GC_CYCLES_PROCESSES processes of the service one
// after another (and as many of BENCH_CANDIDATE's build, alternated with them), each on the same
// seeded database, and loads each with getPet and then createPet, as `npm run bench` does (its
// warm-up and duration, BENCH_WARMUP and BENCH_DURATION). A process is in the state when its run
// of createPet has more than one full collection per second; a process in the normal state has
// one or two in a whole run. Prints each run, then, per build, the processes in the state and
// the mean CPU per create of the others and of those. With BENCH_TRACE_GC=nvp each process's log
// (kept) can be read with bench/gc-trace.mjs.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { measure } from './load.mjs';
import { cleanup, freePort, startServer, stopProcess } from './processes.mjs';
import { NORMAL_SCENARIOS, bindScenario } from './scenarios.mjs';
import { build, prepare, serviceEnvFor } from './setup.mjs';
import { CANDIDATE_DIST, DIST, DURATION, FIRST_PORT, RUN_ID, SERVICE_NODE_FLAGS, WORK, log, num } from './settings.mjs';

const PROCESSES = num('GC_CYCLES_PROCESSES', 6);
const SCENARIOS = ['getPet', 'createPet'].map((name) => NORMAL_SCENARIOS.find((s) => s.name === name));
const builds = [['service', DIST], ...(CANDIDATE_DIST ? [['candidate', CANDIDATE_DIST]] : [])];

async function main() {
  mkdirSync(WORK, { recursive: true });
  build(false);
  const { db, key, prefix, prefixSupported } = await prepare([], SCENARIOS);
  const bound = await Promise.all(SCENARIOS.map((s) => bindScenario(s, { keys: null, cursorFor: async () => null })));
  const runs = Object.fromEntries(builds.map(([name]) => [name, []]));
  for (let i = 0; i < PROCESSES; i++) {
    for (const [name, dist] of builds) {
      const port = await freePort(FIRST_PORT);
      const tag = `${name}-${i + 1}`;
      // Each process its own rate-limit counters, so that no run shares a window with another.
      const env = serviceEnvFor(db, port, `${prefix}${tag}:`, prefixSupported);
      const server = await startServer('service', [...SERVICE_NODE_FLAGS, path.join(dist, 'main.js')], env, port, {
        tag,
      });
      try {
        const byScenario = {};
        for (const scenario of bound) byScenario[scenario.name] = await measure(server, scenario, key);
        const creates = byScenario.createPet;
        const full = creates.loop?.gc?.byKind?.major ?? 0;
        runs[name].push({ full, cpuUsPerReq: creates.cpuUsPerReq, reqPerSec: creates.reqPerSec, log: server.logFile });
      } finally {
        await stopProcess(server.child);
      }
    }
  }
  console.log(`\nProcesses in the pretenuring state (createPet with more than one full collection a second):`);
  const mean = (xs) => (xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : '-');
  for (const [name] of builds) {
    const inState = runs[name].filter((r) => r.full > DURATION);
    const normal = runs[name].filter((r) => r.full <= DURATION);
    console.log(
      `  ${name.padEnd(9)} ${inState.length} of ${runs[name].length}; full collections per run ${runs[name].map((r) => r.full).join(', ')}; ` +
        `CPU per create ${mean(normal.map((r) => r.cpuUsPerReq))} µs in the normal state, ${mean(inState.map((r) => r.cpuUsPerReq))} µs in the state; ` +
        `creates a second ${runs[name].map((r) => r.reqPerSec).join(', ')}`,
    );
  }
  log(`server logs in ${WORK} (${RUN_ID}-*)`);
}

try {
  await main();
} finally {
  await cleanup();
}
