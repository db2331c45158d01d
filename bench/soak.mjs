// The soak mode of `npm run bench` (BENCH_SOAK=1; bench/run.mjs lists its variables).
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { bindAll } from './compare.mjs';
import { gcWindow, load } from './load.mjs';
import { freePort } from '../test/support/local-servers.mjs';
import { memoryOf, startServer, stopProcess } from './processes.mjs';
import { fmt, quietMachineWarnings } from './report.mjs';
import { NORMAL_SCENARIOS } from './scenarios.mjs';
import { prepare, probeFeatures, serviceEnvFor } from './setup.mjs';
import {
  CONNECTIONS,
  DIST,
  FIRST_PORT,
  NODE_VERSION,
  RATE,
  RESULTS,
  ROOT,
  SOAK_MINUTES,
  SOAK_SAMPLE_S,
  SOAK_SCENARIO,
  log,
  SERVICE_NODE_FLAGS,
} from './settings.mjs';
import { formatTargets } from './targets.mjs';

/* global setInterval, clearInterval */

/**
 * After the service's last full collection (bench/gc-probe.mjs), in MiB: the heap in use, the heap
 * V8 holds, and the memory outside it (external, Buffers included); null before the first.
 */
function afterFullGc(service) {
  try {
    const m = JSON.parse(readFileSync(`${service.gcFile}.heap`, 'utf8'));
    const mib = (bytes) => Math.round(bytes / 1048576);
    return { usedMiB: mib(m.usedBytes), totalMiB: mib(m.totalBytes), externalMiB: mib(m.external) };
  } catch {
    return null;
  }
}

/**
 * BENCH_SOAK: the service alone under BENCH_SOAK_SCENARIO at full load for BENCH_SOAK_MINUTES, VmRSS and
 * the heap after the last full collection every 10 s. A leak shows as both still climbing after the
 * first minute (when V8's heap has sized itself); RSS climbing with the heap flat is the heap and the
 * allocator keeping room, not data held.
 */
export async function soak(warnings) {
  const startedAt = new Date().toISOString();
  const loadBefore = os.loadavg()[0];
  if (loadBefore > 1.5) log(`warning: 1-minute load average ${loadBefore.toFixed(2)} before the soak`);
  const chosen = NORMAL_SCENARIOS.find((s) => s.name === SOAK_SCENARIO);
  if (!chosen)
    throw new Error(
      `BENCH_SOAK_SCENARIO: unknown scenario "${SOAK_SCENARIO}" (${NORMAL_SCENARIOS.map((s) => s.name).join(', ')})`,
    );
  const { db, key, many, prefix, prefixSupported } = await prepare(warnings, [chosen]);
  const port = await freePort(FIRST_PORT);
  const service = await startServer(
    'service',
    [...SERVICE_NODE_FLAGS, path.join(DIST, 'main.js')],
    { ...serviceEnvFor(db, port, prefix, prefixSupported), BENCH_GC_HEAP: '1' },
    port,
  );
  const features = await probeFeatures(service, key);
  if (features.keyedStatus !== 200) throw new Error(`GET /v1/pets with the bench key answered ${features.keyedStatus}`);
  const [scenario] = await bindAll([chosen], { service }, key, many?.keys);
  const seconds = Math.round(SOAK_MINUTES * 60);
  log(`soak: ${scenario.label} at ${CONNECTIONS} connections for ${seconds} s, VmRSS every ${SOAK_SAMPLE_S} s`);
  const samples = [];
  const t0 = performance.now();
  const timer = setInterval(() => {
    const m = memoryOf(service.child.pid);
    const tS = Math.round((performance.now() - t0) / 1000);
    const gc = afterFullGc(service);
    samples.push({ tS, rssMiB: m ? Math.round(m.rss) : null, afterFullGc: gc });
    log(
      `soak ${tS} s: RSS ${m ? Math.round(m.rss) : '?'} MiB; after the last full GC: heap used ${gc?.usedMiB ?? '?'}, ` +
        `heap held ${gc?.totalMiB ?? '?'}, external ${gc?.externalMiB ?? '?'} MiB`,
    );
  }, SOAK_SAMPLE_S * 1000);
  await gcWindow(service);
  const r = await load(service, scenario, key, seconds, { rate: RATE });
  clearInterval(timer);
  samples.push({
    tS: Math.round((performance.now() - t0) / 1000),
    rssMiB: r.rssAfterMiB,
    afterFullGc: afterFullGc(service),
  });
  r.loop = await gcWindow(service);
  await stopProcess(service.child);

  // The reference is the RSS after minute one; a soak shorter than two minutes (a test of the
  // mechanics) takes it at half time instead.
  const refAt = Math.min(60, seconds / 2);
  const ref = samples.find((s) => s.tS >= refAt) ?? samples[0];
  const end = samples[samples.length - 1];
  const growth = ref?.rssMiB && end?.rssMiB ? (end.rssMiB - ref.rssMiB) / ref.rssMiB : null;
  const loadAfter = os.loadavg()[0];
  warnings.push(...quietMachineWarnings(loadBefore, loadAfter));
  const target = {
    target: `soak: RSS at the end within 10% of the RSS after ${refAt === 60 ? 'minute one' : `${refAt} s (short soak)`}`,
    value:
      growth === null
        ? 'n/a'
        : `${fmt(ref.rssMiB)} → ${fmt(end.rssMiB)} MiB (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}%)`,
    met: growth === null ? null : growth <= 0.1,
  };
  const result = {
    startedAt,
    finishedAt: new Date().toISOString(),
    mode: 'soak',
    settings: { minutes: SOAK_MINUTES, connections: CONNECTIONS, sampleS: SOAK_SAMPLE_S, scenario: scenario.name },
    machine: { node: NODE_VERSION, postgres: db.version, loadAverage1m: { before: loadBefore, after: loadAfter } },
    features,
    run: r,
    samples,
    target,
    warnings,
  };
  const file = path.join(RESULTS, `${startedAt.replace(/[:.]/g, '-')}-soak.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    [
      '',
      `Soak — the service under ${scenario.label}, ${CONNECTIONS} connections, ${fmt(seconds)} s, Node ${NODE_VERSION} (load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after)`,
      `${fmt(r.reqPerSec)} req/s (${Object.entries(r.statusCodes)
        .map(([c, n]) => `${c} × ${fmt(n)}`)
        .join(
          ', ',
        )}), p50 ${fmt(r.p50Ms, 1)} ms, p99 ${fmt(r.p99Ms, 1)} ms, p99.9 ${fmt(r.p999Ms, 1)} ms, errors ${r.errors}, non-2xx ${r.non2xx}, CPU ${fmt(r.cpuUsPerReq)} µs/req`,
      `GC: ${r.loop.gc.count} pauses, ${fmt(r.loop.gc.totalMs)} ms in total, longest ${fmt(r.loop.gc.maxMs, 1)} ms; event-loop delay p50 ${fmt(r.loop.eventLoopDelayMs.p50, 1)} ms, p99 ${fmt(r.loop.eventLoopDelayMs.p99, 1)} ms, max ${fmt(r.loop.eventLoopDelayMs.max, 1)} ms`,
      `RSS (MiB) every ${SOAK_SAMPLE_S} s: ${samples.map((s) => `${s.tS}s ${s.rssMiB}`).join(', ')}`,
      `Heap used / held after the last full GC (MiB), same instants: ${samples
        .map((s) => `${s.tS}s ${s.afterFullGc ? `${s.afterFullGc.usedMiB}/${s.afterFullGc.totalMiB}` : '?'}`)
        .join(', ')}`,
      '',
      ...formatTargets([target]),
      ...(warnings.length ? ['', 'Warnings:', ...warnings.map((w) => `  - ${w}`)] : []),
      '',
      `JSON: ${path.relative(ROOT, file)}`,
    ].join('\n'),
  );
}
