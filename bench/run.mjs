// `npm run bench`: the service against its peers on real PostgreSQL and Redis, then the embedded
// default. See docs/performance.md.
//
// The servers, all on the same Node and database, each with the same pool (10 connections, kept open):
//   raw      bench/baseline.mjs: node:http + pg, the service's own SQL as named prepared statements
//   floor    bench/peers/floor.ts: bare NestJS + Express + pg, the same SQL, one controller
//   peer     bench/peers/peer.ts: bare NestJS + Express + Prisma + ValidationPipe, as the docs show
//   service  the service, production settings: auth, Redis limits, info logs to a file, metrics,
//            an API key pepper, TRUST_PROXY=1 (the load generator stands in for the proxy)
// Builds the service into .tmp/bench-dist and the peers into .tmp/bench-peers (never dist/),
// creates and seeds a fresh database of 10,000 pets, issues an enterprise API key and 2,000 keys
// on the fixed plans (bench/keys.mjs), starts the servers, and for each scenario runs two phases:
// capacity (each server as fast as it answers), then a fixed rate, half the service's capacity,
// offered to every server (CPU per request of the server, PostgreSQL and Redis, p50 and p99
// where production runs). In each phase it loads each server twice in alternating order (raw,
// floor, peer, service, then the reverse), reporting the mean of the two runs: with autocannon at
// capacity, and at the fixed rate with bench/paced.mjs, which sends the requests evenly spaced in
// time and measures each latency from the request's due time. Every server runs with bench/gc-probe.mjs preloaded (GC pauses and event-loop delay of
// each measured run).
//
// The scenarios (bench/scenarios.mjs): listPets, listPetsStatus, getPet, createPet with the
// enterprise key; listPetsManyKeys (the 2,000 keys, each request from its key's own address,
// every key kept within its plan's limits, and the bench checks the service answered no 429);
// createPetIdempotent (a fresh Idempotency-Key per request; the others run their plain create);
// listStatus* (filtered lists, limit=20, with and without a cursor).
// Then the aged dataset (bench/aged-data.mjs, bench/aged-run.mjs): 2,000,000 pets with skewed
// statuses in a database kept between runs; once the servers above have stopped, raw, the floor,
// the peer and the service start again against it for the aged* scenarios, and the report shows
// the plan of the service's statement for each. Then the embedded default, the service alone.
//
// Prints the table, the targets (bench/targets.mjs) and the cost ledger (bench/ledger.mjs); writes
// JSON to bench/results/. Everything it creates is removed at the end, also on failure, except
// the aged database.
//
// Environment (all optional):
//   BENCH_DURATION      seconds of measured load per run (8)
//   BENCH_WARMUP        seconds of unmeasured load before each run (4, at most half the duration)
//   BENCH_FIRST_WARMUP  seconds of it before each server's first measured run (15, at least
//                       BENCH_WARMUP; none when BENCH_WARMUP=0), so that a fresh process's
//                       optimizing compiler has done its first work before the run
//   BENCH_CONNECTIONS   concurrent connections (64)
//   BENCH_RATE          the fixed-rate phase's requests a second over all connections (half the
//                       service's capacity in the scenario's capacity runs)
//   BENCH_CAPACITY=0    skip the capacity phase (needs BENCH_RATE): comparing two builds' CPU µs/req
//   BENCH_FIXED=0       skip the fixed-rate phase
//   BENCH_PASSES        the fixed-rate phase's passes over the servers, each in the reverse order
//                       of the one before (2)
//   BENCH_TOGETHER=1    at the fixed rate, every server of a pass runs at the same time, each
//                       offered BENCH_RATE, and each pass logs each server's CPU per request over
//                       the service's: the servers meet the same moments of the machine (PostgreSQL's
//                       and Redis's columns blank; pick a rate the machine carries for all at once)
//   BENCH_PG_URL        a PostgreSQL database to connect to for CREATE/DROP DATABASE
//                       (postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_REDIS_URL     Redis for the service's rate limits (redis://127.0.0.1:6379)
//   BENCH_PORT          first port to try; servers take the next free ones (3600)
//   BENCH_ONLY          comma-separated scenario names (all: listPets, listPetsStatus, getPet,
//                       createPet, listPetsManyKeys, createPetIdempotent, listStatusAvailable,
//                       listStatusAvailableCursor, listStatusSold, listStatusSoldCursor,
//                       listStatusPending, agedList, agedAvailable, agedAvailableCursor, agedSold,
//                       agedSoldCursor, agedPending)
//   BENCH_SERVERS       comma-separated servers to run (raw,floor,peer,service; "baseline" = raw)
//   BENCH_CANDIDATE     a directory with another build's main.js (another checkout's dist/): run as
//                       "candidate" wherever the service runs, with the service's settings, and
//                       compared with it (the table's "vs service"); not on the aged or embedded runs
//   BENCH_CANDIDATE_FLAGS  Node and V8 flags on the candidate's command line besides the service's
//                       (space-separated): with BENCH_CANDIDATE=.tmp/bench-dist, the same build
//                       under another setting
//   BENCH_CANDIDATE_ENV  environment variables of the candidate besides the service's (space-separated
//                       NAME=value; NAME= leaves it out), such as MALLOC_ARENA_MAX=
//   BENCH_EMBEDDED=0    skip the embedded-database runs
//   BENCH_AGED=0        skip the aged dataset (its first build takes a while; later runs reuse it)
//   BENCH_PROFILE       the cost ledger, on by default: after the measured runs of listPets,
//                       listPetsManyKeys and createPetIdempotent (or BENCH_PROFILE=<scenario>[,…],
//                       scenarios of the normal dataset; the first scenario when BENCH_ONLY
//                       leaves those three out), one more run each, at the fixed rate,
//                       of service, candidate, floor and peer under V8's CPU profiler
//                       (bench/cpu-profiler.mjs; with BENCH_PERF, Linux perf);
//                       prints the ledger of each side by side and the service's top functions.
//                       The profiled runs are not in the table. BENCH_PROFILE=0 skips them.
//   BENCH_SOAK=1        instead of the comparison: the service alone under BENCH_SOAK_SCENARIO
//                       (listPetsManyKeys; any scenario of the normal dataset) for
//                       BENCH_SOAK_MINUTES (10; BENCH_SOAK=<minutes> also sets it), VmRSS sampled
//                       every 10 s; target: the end within 10% of the RSS after minute one
//   BENCH_FRESH_START=1 instead of the comparison: a rolling deploy's new instance. Every one of
//                       the 2,000 keys is sent once to a first instance, so all are in use; then
//                       BENCH_FRESH_ROUNDS (3) times per build (the service, and the candidate
//                       when BENCH_CANDIDATE is set) a fresh instance is started and sent every
//                       key once, in turn, at BENCH_RATE (1,000 unless set): that pass's p50, p99
//                       and the lookups it sent to the database (bench/fresh-start.mjs)
//   BENCH_SKIP_BUILD=1  reuse .tmp/bench-dist and .tmp/bench-peers as they are
//   BENCH_TRACE_GC=1    V8's trace of every garbage collection, with its reason, and of its
//                       pretenuring decisions, in each server's log
//                       (.tmp/bench-work/<run>-<server>.log, kept after the run);
//                       BENCH_TRACE_GC=nvp: each collection's figures as name=value pairs
//                       (bytes promoted and surviving, survival rates, memory-reducing mode)
//   BENCH_SCHED=1       at a fixed rate, which processes ran while each run's busiest windows of
//                       slow requests fell due, and how long the server waited for a CPU
//                       (bench/sched-probe.mjs; the probe reads /proc every 20 ms and takes
//                       some CPU itself)
//   BENCH_PERF=1        the cost ledger sampled by Linux `perf` (CPU time, every thread, kernel and
//                       native code included) instead of V8's profiler, which samples by the clock;
//                       the servers then run with V8's jitdump flags (bench/perf-profile.mjs)
//   BENCH_NODE_OPTIONS  NODE_OPTIONS for the service processes, in place of the image's
//                       (the Dockerfile's NODE_OPTIONS); empty for V8's defaults
//   BENCH_MALLOC_ARENA_MAX  MALLOC_ARENA_MAX for the service processes, in place of the image's;
//                       empty for glibc's default
//   BENCH_NODE          the Node.js all servers run on: a major version fetched from the npm
//                       registry's `node` package (24, the production image's runtime, by default),
//                       `current` for the Node running this script, or a path to a node binary
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AGED_PETS } from './aged-data.mjs';
import { runAged } from './aged-run.mjs';
import { bindAll, compare } from './compare.mjs';
import { issueKey } from './keys.mjs';
import { measure } from './load.mjs';
import { explainReads, formatFullPlans, formatPlanLines } from './plans.mjs';
import { SLOW_WINDOW_MS } from './paced.mjs';
import { freePort } from '../test/support/local-servers.mjs';
import { cleanup, cleanups, get, memoryOf, startServer, stopProcess } from './processes.mjs';
import {
  aggregate,
  fixedTable,
  fmt,
  ledgerJson,
  ledgerLines,
  loopTable,
  mainTable,
  manyKeysReport,
  quietMachineWarnings,
  scenarioNotes,
} from './report.mjs';
import { PROFILES, SCENARIOS, SELECTED_AGED } from './scenarios.mjs';
import {
  build,
  configSupports,
  prepare,
  probeFeatures,
  redisKeysUnder,
  redisVersion,
  SEED_PETS,
  seedEmbedded,
  serverSpecs,
  serviceEnvFor,
} from './setup.mjs';
import {
  AGED,
  API_KEY_CHECKSUM_SECRET,
  API_KEY_PEPPER,
  CANDIDATE_DIST,
  CANDIDATE_ENV,
  CANDIDATE_FLAGS,
  CAPACITY,
  CONNECTIONS,
  FIXED,
  FRESH_START,
  DIST,
  DURATION,
  EMBEDDED,
  FIRST_PORT,
  METRICS_TOKEN,
  NODE_BIN,
  NODE_VERSION,
  ORDER,
  PASSES,
  PERF,
  PERF_DIR,
  RATE,
  REDIS_URL,
  RESULTS,
  ROOT,
  RUN_ID,
  SERVER_NAMES,
  SERVERS,
  SERVICE_IMAGE_ENV,
  SERVICE_MALLOC_ARENA_MAX,
  SERVICE_NODE_OPTIONS,
  SOAK,
  TOGETHER,
  TRACE_GC,
  WARMUP,
  FIRST_WARMUP,
  WORK,
  distModule,
  log,
  SERVICE_NODE_FLAGS,
} from './settings.mjs';
import { freshStart } from './fresh-start.mjs';
import { perfProfPathSupported, perfUnavailable } from './perf-profile.mjs';
import { soak } from './soak.mjs';
import { computeTargets, formatTargets } from './targets.mjs';

/** An environment with `extra` applied: a name given an empty value is left out. */
function withEnv(env, extra) {
  const out = { ...env, ...extra };
  for (const [name, value] of Object.entries(extra)) if (value === '') delete out[name];
  return out;
}

async function main() {
  mkdirSync(WORK, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  const warnings = build(!SOAK && (SERVERS.includes('floor') || SERVERS.includes('peer')));
  if (SOAK) return soak(warnings);
  if (FRESH_START) return freshStart(warnings);
  if (PERF) {
    const why =
      perfUnavailable() ??
      (perfProfPathSupported(NODE_BIN) ? null : `${NODE_VERSION} has no --perf-prof-path (Node 22 or later has)`);
    if (why) throw new Error(`BENCH_PERF=1: ${why}`);
  }
  const startedAt = new Date().toISOString();
  const loadBefore = os.loadavg()[0];
  if (loadBefore > 1.5)
    log(`warning: 1-minute load average ${loadBefore.toFixed(2)} before the run; the figures will be skewed`);

  const { db, key, many, prefix, prefixSupported } = await prepare(warnings, SCENARIOS);
  const ports = {};
  let next = FIRST_PORT;
  for (const name of SERVER_NAMES) next = (ports[name] = await freePort(next)) + 1;
  // The baseline sends the service's own read statements, when the service names them.
  const { PET_SQL } = await distModule('pets/pets.repository.js').catch(() => ({}));
  const normalNames = SCENARIOS.length > 0 ? ORDER : [];
  const plans = await explainReads(db.url, PET_SQL);
  if (plans)
    for (const [name, p] of Object.entries(plans))
      if (!p.indexScan) warnings.push(`${name} is not served by an index scan`);

  const profiled = (name) => SCENARIOS.some((s) => PROFILES.includes(s.name)) && name !== 'raw';
  const specs = {
    ...serverSpecs({ db, petSql: PET_SQL, ports, prefix, prefixSupported }),
    // Its own rate-limit counters, so the two builds' runs never share a window.
    ...(CANDIDATE_DIST && {
      candidate: [
        [...SERVICE_NODE_FLAGS, ...CANDIDATE_FLAGS, path.join(CANDIDATE_DIST, 'main.js')],
        withEnv(serviceEnvFor(db, ports.candidate, `${prefix}candidate:`, prefixSupported), CANDIDATE_ENV),
      ],
    }),
  };
  const servers = {};
  // One at a time, so that each start-to-ready is measured on an otherwise idle machine.
  for (const name of normalNames)
    servers[name] = await startServer(name, specs[name][0], specs[name][1], ports[name], { profile: profiled(name) });

  let features = null;
  if (servers.service) {
    features = await probeFeatures(servers.service, key);
    features.redis = Boolean(REDIS_URL) && features.rateLimits;
    log(`active on the service: ${JSON.stringify(features)}`);
    if (features.keyedStatus !== 200)
      throw new Error(`GET /v1/pets with the bench key answered ${features.keyedStatus}`);
  }

  // Every server answers the reads; the service and raw answer them with the same bytes, so they
  // do the same work (the floor and the peer answer in their own shapes, as their docs write them).
  const auth = { authorization: `Bearer ${key}` };
  const same = {};
  for (const p of ['/v1/pets?limit=20', '/v1/pets?limit=100&status=sold', '/v1/pets/100']) {
    const answers = Object.fromEntries(
      await Promise.all(normalNames.map(async (name) => [name, await get(servers[name].url + p, auth)])),
    );
    for (const [name, a] of Object.entries(answers))
      if (a.status !== 200) warnings.push(`${name} answers GET ${p} with ${a.status}: ${a.text.slice(0, 200)}`);
    if (answers.service && answers.raw) {
      const [a, b] = [answers.service, answers.raw];
      same[p] = a.status === b.status && a.text === b.text && a.headers.get('link') === b.headers.get('link');
      if (!same[p]) {
        warnings.push(`service and raw answer ${p} differently`);
        log(`${p}: service ${a.status} ${a.headers.get('link')} ${a.text.slice(0, 300)}`);
        log(`${p}: raw ${b.status} ${b.headers.get('link')} ${b.text.slice(0, 300)}`);
      }
    }
  }

  const loadAverages = [];
  const scenarios = await bindAll(SCENARIOS, servers, key, many?.keys);
  const { rows, ledgers, statusChecks } = await compare(servers, scenarios, key, { profiles: PROFILES, loadAverages });
  const memory = Object.fromEntries(normalNames.map((n) => [n, memoryOf(servers[n].child.pid)]));
  if (features?.rateLimits && prefixSupported) {
    const { redis, keys } = await redisKeysUnder(prefix);
    redis.disconnect();
    features.redisKeys = keys.length;
    features.redis = keys.length > 0;
  }
  const loadAfter = os.loadavg()[0];
  await Promise.all(normalNames.map((n) => stopProcess(servers[n].child)));

  const aged =
    AGED && SELECTED_AGED.length && (SERVERS.includes('raw') || SERVERS.includes('service'))
      ? await runAged({
          scenarios: SELECTED_AGED,
          petSql: PET_SQL,
          prefix,
          prefixSupported,
          firstPort: next,
          loadAverages,
        })
      : null;
  if (aged) {
    next = aged.next;
    rows.push(...aged.rows);
  }

  // The embedded default: no DATABASE_URL, no REDIS_URL, a fresh DATA_DIR seeded the same way.
  // The service alone, one run per scenario.
  let embedded = null;
  if (EMBEDDED && servers.service) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-bench-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    log(`embedded database in ${dataDir}; seeding ${SEED_PETS} pets`);
    await seedEmbedded(dataDir, many?.sql ?? '');
    const embeddedKey = issueKey({ DATA_DIR: dataDir }) ?? 'bench-no-key';
    const port = await freePort(next);
    const server = await startServer(
      'embedded',
      [...SERVICE_NODE_FLAGS, path.join(DIST, 'main.js')],
      {
        NODE_ENV: 'production',
        METRICS_TOKEN, // production refuses an open /metrics
        API_KEY_CHECKSUM_SECRET,
        API_KEY_PEPPER,
        ...(configSupports('TRUST_PROXY') ? { TRUST_PROXY: '1' } : {}),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}/v1`,
        ...SERVICE_IMAGE_ENV,
      },
      port,
    );
    const embeddedFeatures = await probeFeatures(server, embeddedKey);
    const embeddedRows = [];
    for (const scenario of await bindAll(SCENARIOS, { service: server }, embeddedKey, many?.keys)) {
      const r = await measure(server, scenario, embeddedKey);
      const row = aggregate(scenario, 'service (embedded)', [r]);
      const raw = rows.find((x) => x.scenarioName === scenario.name && x.server === 'raw' && x.phase === 'capacity');
      row.vsRaw = raw ? row.reqPerSec / raw.reqPerSec : null;
      embeddedRows.push(row);
    }
    embedded = {
      readyMs: Math.round(server.readyMs),
      features: embeddedFeatures,
      memory: memoryOf(server.child.pid),
      rows: embeddedRows,
    };
    await stopProcess(server.child);
  }

  const targets = computeTargets({ rows, servers, embedded, statusChecks });
  warnings.push(...quietMachineWarnings(loadBefore, loadAfter));

  const cpus = os.cpus();
  const normalRows = rows.filter((r) => r.dataset === 'normal');
  const agedRows = rows.filter((r) => r.dataset === 'aged');
  const capacity = (rs) => rs.filter((r) => r.phase === 'capacity');
  const fixed = (rs) => rs.filter((r) => r.phase === 'fixed');
  // Both phases' tables, each under its heading, for one dataset.
  const tables = (rs) => [
    ...(capacity(rs).length ? ['Capacity (every server as fast as it answers):', '', mainTable(capacity(rs)), ''] : []),
    ...(fixed(rs).length
      ? [
          `At a fixed rate (${RATE ? `BENCH_RATE` : "half the service's capacity in the scenario's capacity runs"}; evenly spaced over up to ${CONNECTIONS} connections, latency from each request's due time; CPU µs/req from /proc, with the kernel's part (its system time: the server's reads and writes) beside it, PostgreSQL's summed over its processes${TOGETHER ? `; BENCH_TOGETHER: in each of the ${PASSES} passes the servers ran at the same time, each at the rate, so PostgreSQL's and Redis's figures are blank` : PASSES !== 2 ? `; each server's mean over ${PASSES} passes` : ''}):`,
          '',
          fixedTable(fixed(rs)),
          '',
        ]
      : []),
  ];
  const manyKeysRow =
    rows.find((r) => r.scenarioName === 'listPetsManyKeys' && r.server === 'service' && r.phase === 'capacity') ??
    rows.find((r) => r.scenarioName === 'listPetsManyKeys' && r.server === 'service');
  const manyKeysLines =
    many && manyKeysRow ? manyKeysReport(many.keys, manyKeysRow, statusChecks.listPetsManyKeys) : [];
  const result = {
    startedAt,
    finishedAt: new Date().toISOString(),
    settings: {
      durationS: DURATION,
      warmupS: WARMUP,
      firstWarmupS: FIRST_WARMUP,
      connections: CONNECTIONS,
      seedPets: SEED_PETS,
      servers: normalNames,
      runsPerServer: 2,
      phases: [...(CAPACITY ? ['capacity'] : []), ...(FIXED ? ['fixed'] : [])],
      fixedRate: RATE || 'half the service capacity',
      fixedPasses: PASSES,
      fixedTogether: TOGETHER,
      profiles: PROFILES,
      serviceNodeOptions: SERVICE_NODE_OPTIONS || null,
      serviceMallocArenaMax: SERVICE_MALLOC_ARENA_MAX || null,
    },
    machine: {
      cpu: `${cpus.length} × ${cpus[0]?.model ?? 'unknown'}`,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      os: `${os.type()} ${os.release()}`,
      node: NODE_VERSION,
      postgres: db.version,
      redis: await redisVersion(),
      // Other work on the machine skews every figure; the 1-minute load average says how much.
      loadAverage1m: { before: loadBefore, after: loadAfter, perScenario: loadAverages },
    },
    features,
    responsesIdentical: same,
    startToReadyMs: {
      ...Object.fromEntries(normalNames.map((n) => [n, Math.round(servers[n].readyMs)])),
      aged: aged?.readyMs ?? null,
      embedded: embedded?.readyMs ?? null,
    },
    memoryMiBAtEnd: Object.fromEntries(
      [...normalNames.map((n) => [n, memory[n]]), ['embedded', embedded?.memory]].map(([n, m]) => [
        n,
        m ? { rss: Math.round(m.rss), peak: Math.round(m.hwm) } : null,
      ]),
    ),
    embeddedFeatures: embedded?.features ?? null,
    rows,
    embeddedRows: embedded?.rows ?? [],
    statusChecks,
    aged: aged && {
      database: aged.db.name,
      reused: aged.db.reused,
      checkMs: aged.db.checkMs,
      seedMs: aged.db.seedMs,
      plans: aged.plans,
    },
    targets,
    queryPlans: plans,
    ledger: ledgerJson(ledgers),
    warnings,
  };
  const file = path.join(RESULTS, `${startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);

  const on = (b) => (b ? 'on' : 'OFF');
  const longRuns = (scenarios) =>
    scenarios
      .filter((s) => s.fixedSeconds)
      .map((s) => ` (${s.name} at the fixed rate: ${s.fixedSeconds} s, profiled runs excepted)`)
      .join('');
  const out = [
    '',
    `Animal Store API benchmark — ${result.machine.cpu}, ${result.machine.memoryGiB} GiB, Node ${NODE_VERSION}, PostgreSQL ${db.version}, Redis ${result.machine.redis ?? 'n/a'}`,
    `${CONNECTIONS} connections, ${DURATION} s per run${longRuns(SCENARIOS)} after ${WARMUP} s warm-up (${FIRST_WARMUP} s before each server's first), each server twice per scenario and phase (order ${normalNames.join(', ')}, then the reverse; means shown, errors and non-2xx summed); ${SEED_PETS} seeded pets; load generator on the same machine (load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after).`,
    features
      ? `Service: auth ${on(features.auth)}, rate limits ${on(features.rateLimits)}${features.rateLimits ? ` (${features.redis ? 'Redis' : 'not confirmed in Redis'})` : ''}, request logging ${on(features.requestLogging)} (LOG_LEVEL=info, to a file).`
      : 'Service: not run (BENCH_SERVERS).',
    'raw = node:http + pg (bench/baseline.mjs); floor = bare NestJS + Express + pg (bench/peers/floor.ts); peer = bare NestJS + Express + Prisma + ValidationPipe (bench/peers/peer.ts).',
    ...(warnings.some((w) => /load average|busy before/.test(w))
      ? ['', ...warnings.filter((w) => /load average|busy before/.test(w)).map((w) => `WARNING: ${w}`)]
      : []),
    '',
    ...tables(normalRows),
    ...scenarioNotes([...SCENARIOS, ...SELECTED_AGED].filter((s) => rows.some((r) => r.scenarioName === s.name))),
    ...manyKeysLines,
    ...(agedRows.length
      ? [
          '',
          `Aged dataset (${AGED_PETS.toLocaleString('en-US')} pets, database ${aged.db.name}, ${aged.db.reused ? `reused, checked in ${fmt(aged.db.checkMs)} ms` : `built in ${fmt(aged.db.seedMs / 1000, 1)} s`}; its servers started again against it):`,
          '',
          ...tables(agedRows),
        ]
      : []),
    '',
    `GC pauses and event-loop delay during the measured runs (bench/gc-probe.mjs; means of the two runs, maxima over both), and at the fixed rate the windows of ${SLOW_WINDOW_MS} ms of due time that hold the slowest 1% of the responses (bench/paced.mjs; a few: the p99 is made of stalls, many: of requests slow here and there), and the PostgreSQL connections any server opened and closed during the runs (summed; each forks or ends a backend):`,
    '',
    loopTable(rows),
    ...(embedded
      ? [
          '',
          'Embedded default (PGlite, memory rate limits; the service alone, one run per scenario):',
          '',
          mainTable(embedded.rows),
          '',
          loopTable(embedded.rows),
        ]
      : []),
    '',
    `Start to ready (spawn → /readyz 200): ${normalNames.map((n) => `${n} ${fmt(servers[n].readyMs)} ms`).join(', ')}${embedded ? `, embedded ${fmt(embedded.readyMs)} ms` : ''}.`,
    `Peak RSS (VmHWM, whole run): ${normalNames.map((n) => `${n} ${fmt(memory[n]?.hwm)} MiB`).join(', ')}${embedded ? `, embedded ${fmt(embedded.memory?.hwm)} MiB` : ''}.`,
    '',
    'Targets (docs/performance.md; reported, not asserted; computed from the tables above):',
    ...formatTargets(targets),
    ...(plans
      ? ['', 'Query plans (EXPLAIN ANALYZE on the seeded table; full text in the JSON):', ...formatPlanLines(plans)]
      : []),
    ...(aged?.plans
      ? [
          '',
          "Query plans on the aged dataset (EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) of the service's statement with each scenario's parameters, after its runs):",
          ...formatFullPlans(aged.plans),
        ]
      : []),
    ...(warnings.length ? ['', 'Warnings:', ...warnings.map((w) => `  - ${w}`)] : []),
    ...ledgerLines(ledgers),
    '',
    `JSON: ${path.relative(ROOT, file)}`,
  ];
  console.log(out.join('\n'));
}

let exitCode = 0;
try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : err}`);
  exitCode = 1;
} finally {
  await cleanup();
  // Keep the logs of a failed run (or of a run with BENCH_TRACE_GC) for reading, and the profiles
  // of a profiled one; a good run leaves nothing else behind.
  const kept = (f) => f.endsWith('.cpuprofile') || (TRACE_GC && f.endsWith('.log'));
  for (const f of readdirSync(WORK))
    if (f.startsWith(RUN_ID) && (exitCode === 0 ? !kept(f) : f.endsWith('.gc.json')))
      rmSync(path.join(WORK, f), { recursive: true, force: true });
  // The profiled servers' jitdump files (BENCH_PERF): each holds every compiled function's code.
  rmSync(PERF_DIR, { recursive: true, force: true });
}
process.exit(exitCode);
