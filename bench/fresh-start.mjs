// The fresh-start mode of `npm run bench` (BENCH_FRESH_START=1; bench/run.mjs lists its variables).
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bindAll, sendEveryKey } from './compare.mjs';
import { freePort } from '../test/support/local-servers.mjs';
import { get, startServer, stopProcess } from './processes.mjs';
import { fmt, quietMachineWarnings } from './report.mjs';
import { NORMAL_SCENARIOS } from './scenarios.mjs';
import { prepare, serviceEnvFor } from './setup.mjs';
import {
  CANDIDATE_DIST,
  DIST,
  FIRST_PORT,
  FRESH_ROUNDS,
  METRICS_TOKEN,
  NODE_VERSION,
  RATE,
  RESULTS,
  ROOT,
  log,
  SERVICE_NODE_FLAGS,
} from './settings.mjs';

/** The API key lookups an instance has sent to the database (its /metrics). */
async function lookups(server) {
  const { text } = await get(`${server.url}/metrics`, { authorization: `Bearer ${METRICS_TOKEN}` });
  const line = text.split('\n').find((l) => l.startsWith('api_key_lookups_total'));
  return line === undefined ? null : Number(line.split(' ').pop());
}

/**
 * BENCH_FRESH_START: what a rolling deploy's new instance does in its first seconds while many
 * keys are in use. A first instance is sent every key of listPetsManyKeys once (each is then
 * used, in `last_used_at`); then each build in turn, BENCH_FRESH_ROUNDS times, starts fresh
 * and is sent every key once, in turn, at the fixed rate: the pass's latency and the lookups it
 * needed. The same database and Redis serve every instance, one at a time.
 */
export async function freshStart(warnings) {
  const startedAt = new Date().toISOString();
  const loadBefore = os.loadavg()[0];
  const chosen = NORMAL_SCENARIOS.find((s) => s.name === 'listPetsManyKeys');
  const { db, key, many, prefix, prefixSupported } = await prepare(warnings, [chosen]);
  const port = await freePort(FIRST_PORT);
  const builds = { service: DIST, ...(CANDIDATE_DIST ? { candidate: CANDIDATE_DIST } : {}) };
  const rate = RATE > 0 ? RATE : 1000;
  const start = (name, tag) =>
    startServer(
      name,
      [...SERVICE_NODE_FLAGS, path.join(builds[name], 'main.js')],
      serviceEnvFor(db, port, prefix, prefixSupported),
      port,
      { tag },
    );

  const first = await start('service', 'first');
  const [scenario] = await bindAll([chosen], { service: first }, key, many.keys);
  const marked = await sendEveryKey(first, scenario, key, rate);
  log(`first instance: every key sent once (${marked.requests} requests, p99 ${marked.p99Ms} ms)`);
  await stopProcess(first.child);

  const passes = [];
  for (let round = 1; round <= FRESH_ROUNDS; round++) {
    for (const name of Object.keys(builds)) {
      const server = await start(name, `${name}-${round}`);
      const r = await sendEveryKey(server, scenario, key, rate);
      const sent = await lookups(server);
      await stopProcess(server.child);
      passes.push({ name, round, readyMs: Math.round(server.readyMs), lookups: sent, ...r });
      log(
        `${name}, fresh start ${round}: ready in ${Math.round(server.readyMs)} ms; first pass p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, ${sent} lookups, statuses ${JSON.stringify(r.statusCodes)}`,
      );
    }
  }
  const loadAfter = os.loadavg()[0];
  warnings.push(...quietMachineWarnings(loadBefore, loadAfter));
  const result = {
    startedAt,
    finishedAt: new Date().toISOString(),
    mode: 'fresh-start',
    settings: { rate, rounds: FRESH_ROUNDS, keys: scenario.introduction.keys, candidate: CANDIDATE_DIST },
    machine: { node: NODE_VERSION, postgres: db.version, loadAverage1m: { before: loadBefore, after: loadAfter } },
    passes: passes.map(({ name, round, readyMs, lookups: sent, requests, p50Ms, p99Ms, maxMs, statusCodes }) => ({
      name,
      round,
      readyMs,
      lookups: sent,
      requests,
      p50Ms,
      p99Ms,
      maxMs,
      statusCodes,
    })),
    warnings,
  };
  const file = path.join(RESULTS, `${startedAt.replace(/[:.]/g, '-')}-fresh-start.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    [
      '',
      `Fresh start — ${scenario.introduction.keys} keys in use, each sent once to a fresh instance at ${fmt(rate)} req/s, Node ${NODE_VERSION} (load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after)`,
      '',
      '| build | start | ready ms | p50 ms | p99 ms | max ms | lookups | statuses |',
      '|---|--:|--:|--:|--:|--:|--:|---|',
      ...result.passes.map(
        (p) =>
          `| ${p.name} | ${p.round} | ${fmt(p.readyMs)} | ${fmt(p.p50Ms, 1)} | ${fmt(p.p99Ms, 1)} | ${fmt(p.maxMs, 1)} | ${p.lookups ?? '?'} | ${Object.entries(
            p.statusCodes,
          )
            .map(([c, n]) => `${c} × ${fmt(n)}`)
            .join(', ')} |`,
      ),
      ...(warnings.length ? ['', 'Warnings:', ...warnings.map((w) => `  - ${w}`)] : []),
      '',
      `JSON: ${path.relative(ROOT, file)}`,
    ].join('\n'),
  );
}
