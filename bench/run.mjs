// `npm run bench`: the service against its peers on real PostgreSQL and Redis, then the embedded
// default. See README, "Performance", and issue 13.
//
// The servers, all on the same Node and database, each with the same pool size (10):
//   raw      bench/baseline.mjs: node:http + pg, the service's own SQL as named prepared statements
//   floor    bench/peers/floor.ts: bare NestJS + Express + pg, the same SQL, one controller
//   peer     bench/peers/peer.ts: bare NestJS + Express + Prisma + ValidationPipe, as the docs show
//   service  the service, production settings: auth, Redis limits, info logs to a file, metrics
// Builds the service into .tmp/bench-dist and the peers into .tmp/bench-peers (never dist/),
// creates and seeds a fresh database, issues an enterprise API key, starts the servers, and for
// each scenario loads each server twice with autocannon in alternating order (raw, floor, peer,
// service, then the reverse), reporting the mean of the two runs. Every server runs with
// bench/gc-probe.mjs preloaded (GC pauses and event-loop delay of each measured run). Prints the
// table, the targets of issue 13 and the cost ledger of listPets (bench/ledger.mjs); writes
// JSON to bench/results/. Everything it creates is removed at the end, also on failure.
//
// Environment (all optional):
//   BENCH_DURATION      seconds of measured load per run (8)
//   BENCH_WARMUP        seconds of unmeasured load before each run (2, at most half the duration)
//   BENCH_CONNECTIONS   concurrent connections (64)
//   BENCH_PG_URL        a PostgreSQL database to connect to for CREATE/DROP DATABASE
//                       (postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_REDIS_URL     Redis for the service's rate limits (redis://127.0.0.1:6379)
//   BENCH_PORT          first port to try; servers take the next free ones (3600)
//   BENCH_ONLY          comma-separated scenario names (listPets,listPetsStatus,getPet,createPet)
//   BENCH_SERVERS       comma-separated servers to run (raw,floor,peer,service; "baseline" = raw)
//   BENCH_EMBEDDED=0    skip the embedded-database runs
//   BENCH_PROFILE       the cost ledger, on by default: after the measured runs of listPets (or
//                       BENCH_PROFILE=<scenario>; the first scenario when BENCH_ONLY leaves listPets
//                       out), one more run each of service, floor and peer under V8's CPU profiler
//                       (bench/cpu-profiler.mjs); prints the ledger of each side by side and the
//                       service's top functions. The profiled runs are not in the table.
//                       BENCH_PROFILE=0 skips them.
//   BENCH_SOAK=1        instead of the comparison: the service alone under listPets for
//                       BENCH_SOAK_MINUTES (10; BENCH_SOAK=<minutes> also sets it), VmRSS sampled
//                       every 10 s; target: the end within 10% of the RSS after minute one
//   BENCH_SKIP_BUILD=1  reuse .tmp/bench-dist and .tmp/bench-peers as they are
//   BENCH_NODE_OPTIONS  NODE_OPTIONS for the service processes (e.g. --max-semi-space-size=8)
//   BENCH_NODE          the Node.js all servers run on: a major version fetched from the npm
//                       registry's `node` package (24, the production image's runtime, by default),
//                       `current` for the Node running this script, or a path to a node binary
/* global fetch, AbortSignal, setTimeout, clearTimeout, setInterval, clearInterval */
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { URL, fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { formatLedger, ledger } from './ledger.mjs';
import { formatSummary, summarise } from './profile-summary.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(ROOT);
const DIST = path.join(ROOT, '.tmp/bench-dist');
const PEERS_DIST = path.join(ROOT, '.tmp/bench-peers');
const WORK = path.join(ROOT, '.tmp/bench-work');
const RESULTS = path.join(ROOT, 'bench/results');

const num = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
};
const DURATION = num('BENCH_DURATION', 8);
const WARMUP = Math.min(num('BENCH_WARMUP', 2), DURATION / 2);
const CONNECTIONS = num('BENCH_CONNECTIONS', 64);
const PG_ADMIN_URL = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const FIRST_PORT = num('BENCH_PORT', 3600);
const EMBEDDED = process.env.BENCH_EMBEDDED !== '0';
const SERVER_NAMES = ['raw', 'floor', 'peer', 'service'];
const SERVERS = process.env.BENCH_SERVERS
  ? [...new Set(process.env.BENCH_SERVERS.split(',').map((s) => (s.trim() === 'baseline' ? 'raw' : s.trim())))]
  : SERVER_NAMES;
for (const s of SERVERS)
  if (!SERVER_NAMES.includes(s)) throw new Error(`BENCH_SERVERS: unknown server "${s}" (${SERVER_NAMES.join(', ')})`);
// Fixed order, so the alternation is the same whatever order BENCH_SERVERS lists them in.
const ORDER = SERVER_NAMES.filter((s) => SERVERS.includes(s));
const SOAK = !process.env.BENCH_SOAK || process.env.BENCH_SOAK === '0' ? null : process.env.BENCH_SOAK;
const SOAK_MINUTES = num('BENCH_SOAK_MINUTES', SOAK && SOAK !== '1' ? num('BENCH_SOAK', 10) : 10);
const SOAK_SAMPLE_S = 10;
const GC_PROBE = pathToFileURL(path.join(ROOT, 'bench/gc-probe.mjs')).href;
const CPU_PROFILER = pathToFileURL(path.join(ROOT, 'bench/cpu-profiler.mjs')).href;

/**
 * The Node.js the service and the baseline run on. By default the production image's
 * runtime (Node 24 LTS, from the npm registry's `node` package, as scripts/test-node24.sh
 * does), so the figures are those of what is deployed; both servers always share it.
 */
function resolveNode(wanted) {
  if (wanted === 'current') return process.execPath;
  if (!/^\d+(\.\d+){0,2}$/.test(wanted)) {
    if (!existsSync(wanted)) throw new Error(`BENCH_NODE: no node binary at ${wanted}`);
    return wanted;
  }
  try {
    const out = execFileSync('npx', ['-y', '-p', `node@${wanted}`, 'node', '-p', 'process.execPath'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return out.trim().split('\n').pop();
  } catch (err) {
    throw new Error(`BENCH_NODE=${wanted}: could not get node@${wanted} from the npm registry (${err.message.split('\n')[0]}); BENCH_NODE=current uses ${process.version}`, { cause: err });
  }
}
const NODE_BIN = resolveNode(process.env.BENCH_NODE || '24');
const NODE_VERSION = execFileSync(NODE_BIN, ['--version'], { encoding: 'utf8' }).trim();
const RUN_ID = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const SEED_PETS = 10_000;
/** The service runs as in production, where /metrics needs a token (or a port of its own). */
const METRICS_TOKEN = `bench-${randomBytes(12).toString('hex')}`;
// Production requires it: the key tool then issues version 2 keys, as production does.
const API_KEY_CHECKSUM_SECRET = randomBytes(32).toString('base64');

// Seed: statuses interleaved along the ids (60% available, 35% pending, 5% sold, so the
// status=sold page is served by the (status, id) index), and every hundredth categoryId
// above 2^53, so exact int64 output is exercised on every page.
const SEED_SQL = `
INSERT INTO "pets" ("name", "category_id", "status", "created_at", "updated_at")
SELECT 'Pet ' || i,
       CASE WHEN i % 100 = 0 THEN 9223372036854775807 - i ELSE 1 + i % 50 END,
       (CASE WHEN i % 100 < 60 THEN 'available' WHEN i % 100 < 95 THEN 'pending' ELSE 'sold' END)::"PetStatus",
       now(), now()
FROM generate_series(1, ${SEED_PETS}) AS i;
ANALYZE "pets";`;

const ALL_SCENARIOS = [
  { name: 'listPets', label: 'listPets limit=20', request: { method: 'GET', path: '/v1/pets?limit=20' } },
  {
    name: 'listPetsStatus',
    label: 'listPets status=sold limit=100',
    request: { method: 'GET', path: '/v1/pets?limit=100&status=sold' },
  },
  {
    name: 'getPet',
    label: 'getPet (random id)',
    request: {
      method: 'GET',
      path: '/v1/pets/1',
      setupRequest: (req) => ({ ...req, path: `/v1/pets/${1 + Math.floor(Math.random() * SEED_PETS)}` }),
    },
  },
  {
    name: 'createPet',
    label: 'createPet',
    request: {
      method: 'POST',
      path: '/v1/pets',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"Bench pet","categoryId":9007199254740993,"status":"pending"}',
    },
  },
];
const SCENARIOS = ALL_SCENARIOS.filter((s) => !process.env.BENCH_ONLY || process.env.BENCH_ONLY.split(',').includes(s.name));
/**
 * The scenario of the cost ledger: listPets (issue 13 asks for its ledger on every run), or the
 * first scenario run when BENCH_ONLY leaves it out; BENCH_PROFILE=<scenario> names another and
 * BENCH_PROFILE=0 skips the profiled runs.
 */
const PROFILE =
  process.env.BENCH_PROFILE === '0'
    ? null
    : !process.env.BENCH_PROFILE || process.env.BENCH_PROFILE === '1'
      ? (SCENARIOS.find((s) => s.name === 'listPets') ?? SCENARIOS[0])?.name ?? null
      : process.env.BENCH_PROFILE;

// ---------------------------------------------------------------------------------------------
// Clean-up: every process and resource is registered as it is created and released at the end.

const cleanups = [];
const children = new Set();
let cleaningUp = false;

async function cleanup() {
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

async function stopProcess(child, signal = 'SIGTERM') {
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

// ---------------------------------------------------------------------------------------------
// Helpers

const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);

async function freePort(from) {
  for (let port = from; port < from + 100; port++) {
    const ok = await new Promise((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (ok) return port;
  }
  throw new Error(`no free port from ${from} to ${from + 99}`);
}

/** VmRSS and VmHWM (peak) of a process in MiB, from /proc (Linux); null elsewhere. */
function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in ms; null where /proc is missing. */
function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

async function get(url, headers = {}) {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function lineCount(file) {
  try {
    const buf = readFileSync(file);
    let n = 0;
    for (const b of buf) if (b === 10) n++;
    return n;
  } catch {
    return 0;
  }
}

/**
 * Starts `node <args>` with output to a log file, the GC probe (and with `profile` the CPU
 * profiler) preloaded; resolves once /readyz answers 200.
 */
async function startServer(name, args, env, port, { profile = false } = {}) {
  const logFile = path.join(WORK, `${RUN_ID}-${name}.log`);
  const gcFile = path.join(WORK, `${RUN_ID}-${name}.gc.json`);
  const profileFile = path.join(WORK, `${RUN_ID}-${name}-${PROFILE}.cpuprofile`);
  const fd = openSync(logFile, 'w');
  const t0 = performance.now();
  const preload = ['--import', GC_PROBE, ...(profile ? ['--import', CPU_PROFILER] : [])];
  const child = spawn(NODE_BIN, [...preload, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      BENCH_GC_FILE: gcFile,
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
        log(`${name} ready on ${url} in ${Math.round(readyMs)} ms (pid ${child.pid})`);
        return { name, child, url, port, logFile, gcFile, profileFile: profile ? profileFile : null, readyMs };
      }
    } catch {
      /* not listening yet */
    }
    await sleep(20);
  }
  const tail = readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
  throw new Error(
    `${name} did not become ready (exit ${child.exitCode ?? child.signalCode ?? 'none'}); its output:\n${tail}`,
  );
}

/** One autocannon run against a server, with the server's memory and CPU sampled meanwhile. */
async function load(server, scenario, key, seconds) {
  let peakRss = 0;
  const sample = () => {
    const m = memoryOf(server.child.pid);
    if (m) peakRss = Math.max(peakRss, m.rss);
  };
  const timer = setInterval(sample, 100);
  const cpu0 = cpuMsOf(server.child.pid);
  const lines0 = server.name === 'service' ? lineCount(server.logFile) : 0;
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${key}` },
    requests: [scenario.request],
  });
  // Read at once: the RSS the load left behind, before the process has idled and given any back.
  const after = memoryOf(server.child.pid);
  const cpu1 = cpuMsOf(server.child.pid);
  clearInterval(timer);
  sample();
  const total = result.requests.total;
  return {
    reqPerSec: Math.round(result.requests.average),
    requests: total,
    p50Ms: result.latency.p50,
    p90Ms: result.latency.p90,
    p99Ms: result.latency.p99,
    p999Ms: result.latency.p99_9,
    maxMs: result.latency.max,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    status2xx: result['2xx'],
    rssAfterMiB: after ? Math.round(after.rss) : null,
    peakRssMiB: peakRss ? Math.round(peakRss) : null,
    cpuUsPerReq: cpu0 !== null && cpu1 !== null && total > 0 ? Math.round(((cpu1 - cpu0) * 1000) / total) : null,
    logLinesPerReq:
      server.name === 'service' && total > 0
        ? Math.round(((lineCount(server.logFile) - lines0) / total) * 100) / 100
        : null,
  };
}

/** Waits for a file a server writes on a signal; `accept` says whether its content is the fresh one. */
async function awaitFile(file, accept, what) {
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
async function gcWindow(server) {
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
 * A measured run: warm-up, then the probe's window opened, the load, the window closed. With
 * `profile`, V8's CPU profiler runs during the load (bench/cpu-profiler.mjs) and the run returns
 * the profile as well.
 */
async function measure(server, scenario, key, { profile = false, quiet = false } = {}) {
  if (WARMUP > 0) await load(server, scenario, key, WARMUP);
  await gcWindow(server); // discards the warm-up's pauses
  if (profile) {
    rmSync(server.profileFile, { force: true });
    server.child.kill('SIGUSR2'); // starts the profiler
  }
  const r = await load(server, scenario, key, DURATION);
  if (profile) server.child.kill('SIGUSR2'); // stops it and writes the profile
  r.loop = await gcWindow(server);
  if (profile) {
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
  }
  if (!quiet)
    log(
      `${scenario.name.padEnd(15)} ${server.name.padEnd(8)} ${r.reqPerSec} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, ` +
        `non-2xx ${r.non2xx}, errors ${r.errors}, RSS ${r.rssAfterMiB} MiB, ${r.cpuUsPerReq} µs/req, ` +
        `GC ${r.loop.gc.count}× ${Math.round(r.loop.gc.totalMs)} ms${profile ? ' (profiled)' : ''}`,
    );
  return r;
}

function tsc(args, outDir, what) {
  try {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    return [];
  } catch (err) {
    // tsc still emits on type errors; a half-finished file elsewhere in the tree should not
    // stop a measurement, but the result says so.
    const out = `${err.stdout ?? ''}${err.stderr ?? ''}`.trim();
    if (!existsSync(outDir)) throw new Error(`${what}: build failed:\n${out}`, { cause: err });
    log(`warning: the build of ${what} reported type errors (the emitted code is measured anyway):\n${out}`);
    return [`build of ${what} reported type errors: ${out.split('\n')[0]}`];
  }
}

function build(withPeers) {
  const warnings = [];
  if (!(process.env.BENCH_SKIP_BUILD === '1' && existsSync(path.join(DIST, 'main.js')))) {
    log('building the service into .tmp/bench-dist');
    warnings.push(...tsc(['-p', 'tsconfig.build.json', '--outDir', DIST], path.join(DIST, 'main.js'), 'the service'));
  }
  if (withPeers && !(process.env.BENCH_SKIP_BUILD === '1' && existsSync(path.join(PEERS_DIST, 'bench/peers')))) {
    log('building the floor and peer apps into .tmp/bench-peers');
    warnings.push(...tsc(['-p', 'bench/peers/tsconfig.build.json'], path.join(PEERS_DIST, 'bench/peers/peer.js'), 'the peers'));
  }
  return warnings;
}

const distModule = (rel) => import(pathToFileURL(path.join(DIST, rel)).href);
/**
 * The database openers of the built service: database/pg-database.js and embedded-database.js
 * (each loaded only when used, since database.js imports them on demand), database/database.js
 * before that, prisma/database.js before the layout of issue 17.
 */
async function databaseModule() {
  if (existsSync(path.join(DIST, 'database/pg-database.js')) && !(await distModule('database/database.js')).openEmbedded) {
    return { ...(await distModule('database/pg-database.js')), ...(await distModule('database/embedded-database.js')) };
  }
  return distModule(existsSync(path.join(DIST, 'database/database.js')) ? 'database/database.js' : 'prisma/database.js');
}

async function createDatabase() {
  const name = `animal_bench_${RUN_ID}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  const [{ server_version: version }] = (await admin.query('SHOW server_version')).rows;
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  cleanups.push(async () => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.end();
    log(`dropped database ${name}`);
  });
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), version };
}

async function migrateAndSeed(databaseUrl) {
  const env = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
  if (existsSync(path.join(DIST, 'database/migrate.main.js'))) {
    execFileSync(process.execPath, [path.join(DIST, 'database/migrate.main.js')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } else {
    const { loadConfig } = await distModule('config/config.js');
    const { migratePostgres } = await databaseModule();
    const config = loadConfig({ DATABASE_URL: databaseUrl });
    await migratePostgres(config.database ?? config, () => {}); // per-slice configuration, or the flat one of older versions
  }
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  await c.query(SEED_SQL);
  await c.end();
}

/**
 * EXPLAIN (ANALYZE) of the service's read statements on the seeded table: each must be an
 * index scan (primary key, or (status, id) with a status), never a sequential scan and sort.
 */
async function explainReads(databaseUrl, petSql) {
  if (!petSql) return null;
  const cases = [
    ['listPets limit=20', petSql.list, [21]],
    ['listPets status=sold limit=100', petSql.listStatus, ['sold', 101]],
    ['listPets limit=20 after a cursor', petSql.listAfter, [5000, 21]],
    ['listPets status=sold limit=100 after a cursor', petSql.listStatusAfter, ['sold', 5000, 101]],
    ['getPet', petSql.get, [4242]],
  ];
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const plans = {};
    for (const [name, sql, params] of cases) {
      const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
      const text = rows.map((r) => r['QUERY PLAN']);
      plans[name] = {
        sql,
        params,
        plan: text,
        indexScan: text.some((l) => /Index (Only )?Scan/.test(l)) && !text.some((l) => /Seq Scan|Sort/.test(l)),
      };
    }
    return plans;
  } finally {
    await c.end();
  }
}

/** Seeds a fresh embedded data directory through the service's own open-and-migrate path. */
async function seedEmbedded(dataDir) {
  const { loadConfig } = await distModule('config/config.js');
  const { openEmbedded } = await databaseModule();
  const config = loadConfig({ DATA_DIR: dataDir, NODE_ENV: 'production', METRICS_TOKEN, API_KEY_CHECKSUM_SECRET });
  const db = await openEmbedded(
    config.database ?? config, // per-slice configuration, or the flat one of older versions
    () => {},
    'benchmark seeding',
  );
  try {
    await db.withRunner((sql) => sql.exec(SEED_SQL));
  } finally {
    await db.close();
  }
}

/** An enterprise key with limits far above what a run can use, when the service has the tool. */
function issueKey(env) {
  const cli = path.join(DIST, 'cli/apikey.js');
  if (!existsSync(cli)) return null;
  const out = execFileSync(
    process.execPath,
    [
      cli,
      'create',
      '--name',
      `bench ${RUN_ID}`,
      '--plan',
      'enterprise',
      '--per-minute',
      '1000000000',
      '--per-day',
      '2000000000',
      '--json',
    ],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', METRICS_TOKEN, API_KEY_CHECKSUM_SECRET, LOG_LEVEL: 'warn', ...env },
      encoding: 'utf8',
    },
  );
  for (const line of out.trim().split('\n').reverse()) {
    try {
      const parsed = JSON.parse(line);
      if (typeof parsed.key === 'string') return parsed.key;
    } catch {
      /* not the JSON line */
    }
  }
  throw new Error(`the apikey tool printed no key:\n${out}`);
}

/** Whether the service reads a variable: src/config/config.ts, or since configuration is per slice, any file of src/config. */
function configSupports(variable) {
  try {
    const dir = path.join(ROOT, 'src/config');
    return readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))
      .some((f) => readFileSync(path.join(dir, f), 'utf8').includes(`'${variable}'`));
  } catch {
    return false;
  }
}

/** What the service under test actually does per request, found by asking it. */
async function probeFeatures(server, key) {
  const anonymous = await get(`${server.url}/v1/pets?limit=1`);
  const keyed = await get(`${server.url}/v1/pets?limit=1`, { authorization: `Bearer ${key}` });
  const lines0 = lineCount(server.logFile);
  for (let i = 0; i < 20; i++) await get(`${server.url}/v1/pets?limit=1`, { authorization: `Bearer ${key}` });
  await sleep(300); // an asynchronous logger may flush late
  return {
    auth: anonymous.status === 401,
    apiKey: key !== 'bench-no-key',
    rateLimits: keyed.headers.get('x-ratelimit-limit') !== null,
    rateLimitHeader: keyed.headers.get('x-ratelimit-limit'),
    requestLogging: lineCount(server.logFile) - lines0 >= 20,
    keyedStatus: keyed.status,
  };
}

async function redisKeysUnder(prefix) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const keys = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    return { redis, keys };
  } catch (err) {
    redis.disconnect();
    throw err;
  }
}

async function redisVersion() {
  try {
    const { Redis } = await import('ioredis');
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const info = await redis.info('server');
    redis.disconnect();
    return /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n)
    ? '–'
    : Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const times = (r) => (r === null || r === undefined ? '' : `${r.toFixed(2)}x`);

/** A Markdown table, the first `left` columns left-aligned, the rest right-aligned. */
function markdown(header, body, left = 2) {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) =>
    `| ${cells.map((c, i) => (i < left ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((w, i) => (i < left ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
    ...body.map(line),
  ].join('\n');
}

function mainTable(rows) {
  return markdown(
    ['Scenario', 'Server', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'errors', 'non-2xx', 'RSS after MiB', 'CPU µs/req', 'vs raw', 'vs floor', 'vs peer'],
    rows.map((r) => [
      r.scenario,
      r.server,
      fmt(r.reqPerSec),
      fmt(r.p50Ms, 1),
      fmt(r.p90Ms, 1),
      fmt(r.p99Ms, 1),
      fmt(r.p999Ms, 1),
      fmt(r.errors),
      fmt(r.non2xx),
      fmt(r.rssAfterMiB),
      fmt(r.cpuUsPerReq),
      times(r.vsRaw),
      times(r.vsFloor),
      times(r.vsPeer),
    ]),
  );
}

function loopTable(rows) {
  return markdown(
    ['Scenario', 'Server', 'GC pauses', 'GC total ms', 'GC max ms', 'GC % of run', 'loop delay p50 ms', 'p99 ms', 'max ms'],
    rows.map((r) => [
      r.scenario,
      r.server,
      fmt(r.gc.count),
      fmt(r.gc.totalMs),
      fmt(r.gc.maxMs, 1),
      fmt((100 * r.gc.totalMs) / (DURATION * 1000), 1),
      fmt(r.loop.p50, 1),
      fmt(r.loop.p99, 1),
      fmt(r.loop.max, 1),
    ]),
  );
}

const mean = (xs) => {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x));
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
};
const max = (xs) => Math.max(...xs.filter((x) => typeof x === 'number'));
const sum = (xs) => xs.reduce((a, b) => a + (b ?? 0), 0);

/** One row of the table: the mean of a server's runs of a scenario (errors summed, maxima kept). */
function aggregate(scenario, server, runs) {
  const m = (k) => mean(runs.map((r) => r[k]));
  return {
    scenario: scenario.label,
    scenarioName: scenario.name,
    server,
    reqPerSec: Math.round(m('reqPerSec')),
    p50Ms: m('p50Ms'),
    p90Ms: m('p90Ms'),
    p99Ms: m('p99Ms'),
    p999Ms: m('p999Ms'),
    maxMs: max(runs.map((r) => r.maxMs)),
    errors: sum(runs.map((r) => r.errors)),
    non2xx: sum(runs.map((r) => r.non2xx)),
    rssAfterMiB: m('rssAfterMiB'),
    cpuUsPerReq: m('cpuUsPerReq'),
    logLinesPerReq: m('logLinesPerReq'),
    gc: {
      count: mean(runs.map((r) => r.loop.gc.count)),
      totalMs: mean(runs.map((r) => r.loop.gc.totalMs)),
      maxMs: max(runs.map((r) => r.loop.gc.maxMs)),
    },
    loop: {
      p50: mean(runs.map((r) => r.loop.eventLoopDelayMs.p50)),
      p99: mean(runs.map((r) => r.loop.eventLoopDelayMs.p99)),
      max: max(runs.map((r) => r.loop.eventLoopDelayMs.max)),
    },
    runs: runs.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'profile'))),
  };
}

/** Loads on the machine that the bench itself does not explain make every figure unreliable. */
function quietMachineWarnings(before, after) {
  const w = [];
  if (before > 1.5)
    w.push(`the machine was busy before the run: 1-minute load average ${before.toFixed(2)} (> 1.5); the figures are skewed`);
  // The bench keeps about one runnable process per core (load generator, server, PostgreSQL).
  const expected = os.cpus().length + 1;
  if (after - before > expected)
    w.push(`the load average rose from ${before.toFixed(2)} to ${after.toFixed(2)}, more than the bench's own load (~${expected}) explains: other work ran meanwhile`);
  return w;
}

// ---------------------------------------------------------------------------------------------

function serviceEnvFor(db, port, prefix, prefixSupported) {
  return {
    NODE_ENV: 'production',
    METRICS_TOKEN, // production refuses an open /metrics
    API_KEY_CHECKSUM_SECRET,
    DATABASE_URL: db.url,
    REDIS_URL,
    LOG_LEVEL: 'info',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}/v1`,
    STAGING_BASE_URL: `http://127.0.0.1:${port}/v1`,
    ...(prefixSupported ? { RATE_LIMIT_PREFIX: prefix } : {}),
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
  };
}

/** The fresh database, the key, the Redis prefix: what every mode needs before a server starts. */
async function prepare(warnings) {
  const db = await createDatabase();
  log(`database ${db.name} (PostgreSQL ${db.version}); migrating and seeding ${SEED_PETS} pets`);
  await migrateAndSeed(db.url);
  const key = issueKey({ DATABASE_URL: db.url }) ?? 'bench-no-key';
  if (key === 'bench-no-key') warnings.push('the service has no API key tool yet: requests carry a dummy bearer token');
  const prefix = `bench:${RUN_ID}:`;
  const prefixSupported = configSupports('RATE_LIMIT_PREFIX');
  if (prefixSupported) {
    cleanups.push(async () => {
      const { redis, keys } = await redisKeysUnder(prefix);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });
  }
  return { db, key, prefix, prefixSupported };
}

async function main() {
  mkdirSync(WORK, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  const warnings = build(!SOAK && (SERVERS.includes('floor') || SERVERS.includes('peer')));
  if (SOAK) return soak(warnings);
  const startedAt = new Date().toISOString();
  const loadBefore = os.loadavg()[0];
  if (loadBefore > 1.5) log(`warning: 1-minute load average ${loadBefore.toFixed(2)} before the run; the figures will be skewed`);

  const { db, key, prefix, prefixSupported } = await prepare(warnings);
  const ports = {};
  let next = FIRST_PORT;
  for (const name of SERVER_NAMES) next = (ports[name] = await freePort(next)) + 1;
  // The baseline sends the service's own read statements, when the service names them.
  const { PET_SQL } = await distModule('pets/pets.service.js').catch(() => ({}));
  const plans = await explainReads(db.url, PET_SQL);
  if (plans)
    for (const [name, p] of Object.entries(plans))
      if (!p.indexScan) warnings.push(`${name} is not served by an index scan`);

  const profiled = (name) => Boolean(PROFILE) && name !== 'raw';
  const specs = {
    raw: [
      [path.join(ROOT, 'bench/baseline.mjs')],
      {
        DATABASE_URL: db.url,
        DB_POOL_MAX: '10',
        // The service's base URL, so that the Link headers of both are the same text.
        PUBLIC_BASE_URL: `http://127.0.0.1:${ports.service}/v1`,
        ...(PET_SQL ? { BENCH_PET_SQL: JSON.stringify(PET_SQL) } : {}),
      },
    ],
    floor: [[path.join(PEERS_DIST, 'bench/peers/floor.js')], { DATABASE_URL: db.url, DB_POOL_MAX: '10', NODE_ENV: 'production' }],
    peer: [[path.join(PEERS_DIST, 'bench/peers/peer.js')], { DATABASE_URL: db.url, DB_POOL_MAX: '10', NODE_ENV: 'production' }],
    service: [[path.join(DIST, 'main.js')], serviceEnvFor(db, ports.service, prefix, prefixSupported)],
  };
  const servers = {};
  // One at a time, so that each start-to-ready is measured on an otherwise idle machine.
  for (const name of ORDER)
    servers[name] = await startServer(name, specs[name][0], specs[name][1], ports[name], { profile: profiled(name) });

  let features = null;
  if (servers.service) {
    features = await probeFeatures(servers.service, key);
    features.redis = Boolean(REDIS_URL) && features.rateLimits;
    log(`active on the service: ${JSON.stringify(features)}`);
    if (features.keyedStatus !== 200) throw new Error(`GET /v1/pets with the bench key answered ${features.keyedStatus}`);
  }

  // Every server answers the reads; the service and raw answer them with the same bytes, so they
  // do the same work (the floor and the peer answer in their own shapes, as their docs write them).
  const auth = { authorization: `Bearer ${key}` };
  const same = {};
  for (const p of ['/v1/pets?limit=20', '/v1/pets?limit=100&status=sold', '/v1/pets/100']) {
    const answers = Object.fromEntries(
      await Promise.all(ORDER.map(async (name) => [name, await get(servers[name].url + p, auth)])),
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

  const rows = [];
  const loadAverages = [];
  const ledgers = [];
  for (const scenario of SCENARIOS) {
    // Twice each, the second pass in the reverse order, so drift (table growth, caches, a
    // neighbour's load) does not favour whoever goes first.
    const per = Object.fromEntries(ORDER.map((n) => [n, []]));
    const order = [...ORDER, ...[...ORDER].reverse()];
    const before = os.loadavg()[0];
    for (const [i, name] of order.entries()) {
      const r = await measure(servers[name], scenario, key);
      per[name].push({ pass: i < ORDER.length ? 1 : 2, ...r });
    }
    loadAverages.push({ scenario: scenario.name, before, after: os.loadavg()[0] });
    const scenarioRows = ORDER.map((n) => aggregate(scenario, n, per[n]));
    const rate = (n) => scenarioRows.find((r) => r.server === n)?.reqPerSec ?? null;
    for (const r of scenarioRows) {
      r.vsRaw = r.server !== 'raw' && rate('raw') ? r.reqPerSec / rate('raw') : null;
      r.vsFloor = r.server !== 'floor' && rate('floor') ? r.reqPerSec / rate('floor') : null;
      r.vsPeer = r.server !== 'peer' && rate('peer') ? r.reqPerSec / rate('peer') : null;
    }
    rows.push(...scenarioRows);

    // One more run each under the CPU profiler, not in the table (profiling costs a few %).
    if (scenario.name === PROFILE) {
      for (const name of ['service', 'floor', 'peer'].filter((n) => servers[n])) {
        const r = await measure(servers[name], scenario, key, { profile: true });
        ledgers.push({
          name,
          file: servers[name].profileFile,
          cpuUsPerReq: r.cpuUsPerReq,
          reqPerSec: r.reqPerSec,
          ledger: ledger(r.profile),
          summary: name === 'service' ? summarise(r.profile, 15) : null,
        });
      }
    }
  }
  const memory = Object.fromEntries(ORDER.map((n) => [n, memoryOf(servers[n].child.pid)]));
  if (features?.rateLimits && prefixSupported) {
    const { redis, keys } = await redisKeysUnder(prefix);
    redis.disconnect();
    features.redisKeys = keys.length;
    features.redis = keys.length > 0;
  }
  const loadAfter = os.loadavg()[0];
  await Promise.all(ORDER.map((n) => stopProcess(servers[n].child)));

  // The embedded default: no DATABASE_URL, no REDIS_URL, a fresh DATA_DIR seeded the same way.
  // The service alone, one run per scenario.
  let embedded = null;
  if (EMBEDDED && servers.service) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-bench-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    log(`embedded database in ${dataDir}; seeding ${SEED_PETS} pets`);
    await seedEmbedded(dataDir);
    const embeddedKey = issueKey({ DATA_DIR: dataDir }) ?? 'bench-no-key';
    const port = await freePort(next);
    const server = await startServer(
      'embedded',
      [path.join(DIST, 'main.js')],
      {
        NODE_ENV: 'production',
        METRICS_TOKEN, // production refuses an open /metrics
        API_KEY_CHECKSUM_SECRET,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}/v1`,
        ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
      },
      port,
    );
    const embeddedFeatures = await probeFeatures(server, embeddedKey);
    const embeddedRows = [];
    for (const scenario of SCENARIOS) {
      const r = await measure(server, scenario, embeddedKey);
      const row = aggregate(scenario, 'service (embedded)', [r]);
      const raw = rows.find((x) => x.scenarioName === scenario.name && x.server === 'raw');
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

  const targets = computeTargets(rows, servers, embedded);
  warnings.push(...quietMachineWarnings(loadBefore, loadAfter));

  const cpus = os.cpus();
  const result = {
    startedAt,
    finishedAt: new Date().toISOString(),
    settings: {
      durationS: DURATION,
      warmupS: WARMUP,
      connections: CONNECTIONS,
      seedPets: SEED_PETS,
      servers: ORDER,
      runsPerServer: 2,
      profile: PROFILE,
      serviceNodeOptions: process.env.BENCH_NODE_OPTIONS ?? null,
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
      ...Object.fromEntries(ORDER.map((n) => [n, Math.round(servers[n].readyMs)])),
      embedded: embedded?.readyMs ?? null,
    },
    memoryMiBAtEnd: Object.fromEntries(
      [...ORDER.map((n) => [n, memory[n]]), ['embedded', embedded?.memory]].map(([n, m]) => [
        n,
        m ? { rss: Math.round(m.rss), peak: Math.round(m.hwm) } : null,
      ]),
    ),
    embeddedFeatures: embedded?.features ?? null,
    rows,
    embeddedRows: embedded?.rows ?? [],
    targets,
    queryPlans: plans,
    ledger: ledgers.length
      ? {
          scenario: PROFILE,
          profiles: ledgers.map((l) => ({
            server: l.name,
            file: path.relative(ROOT, l.file),
            reqPerSec: l.reqPerSec,
            cpuUsPerReq: l.cpuUsPerReq,
            busyMs: Math.round(l.ledger.busyMs),
            layers: l.ledger.layers
              .filter((x) => x.ms > 0)
              .map((x) => ({
                layer: x.layer,
                pctBusy: Math.round(x.share * 1000) / 10,
                usPerReq: l.cpuUsPerReq ? Math.round(x.share * l.cpuUsPerReq * 10) / 10 : null,
              })),
            unmatched: l.ledger.unmatched.slice(0, 20),
            warnings: l.ledger.warnings,
          })),
          serviceTopFunctions: ledgers.find((l) => l.name === 'service')?.summary ?? null,
        }
      : null,
    warnings,
  };
  const file = path.join(RESULTS, `${startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);

  const on = (b) => (b ? 'on' : 'OFF');
  const serviceLedger = ledgers.find((l) => l.name === 'service');
  const out = [
    '',
    `Animal Store API benchmark — ${result.machine.cpu}, ${result.machine.memoryGiB} GiB, Node ${NODE_VERSION}, PostgreSQL ${db.version}, Redis ${result.machine.redis ?? 'n/a'}`,
    `${CONNECTIONS} connections, ${DURATION} s per run after ${WARMUP} s warm-up, each server twice per scenario (order ${ORDER.join(', ')}, then the reverse; means shown, errors and non-2xx summed); ${SEED_PETS} seeded pets; load generator on the same machine (load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after).`,
    features
      ? `Service: auth ${on(features.auth)}, rate limits ${on(features.rateLimits)}${features.rateLimits ? ` (${features.redis ? 'Redis' : 'not confirmed in Redis'})` : ''}, request logging ${on(features.requestLogging)} (LOG_LEVEL=info, to a file).`
      : 'Service: not run (BENCH_SERVERS).',
    'raw = node:http + pg (bench/baseline.mjs); floor = bare NestJS + Express + pg (bench/peers/floor.ts); peer = bare NestJS + Express + Prisma + ValidationPipe (bench/peers/peer.ts).',
    ...(warnings.some((w) => /load average|busy before/.test(w))
      ? ['', ...warnings.filter((w) => /load average|busy before/.test(w)).map((w) => `WARNING: ${w}`)]
      : []),
    '',
    mainTable(rows),
    '',
    'GC pauses and event-loop delay during the measured runs (bench/gc-probe.mjs; means of the two runs, maxima over both):',
    '',
    loopTable(rows),
    ...(embedded
      ? ['', 'Embedded default (PGlite, memory rate limits; the service alone, one run per scenario):', '', mainTable(embedded.rows), '', loopTable(embedded.rows)]
      : []),
    '',
    `Start to ready (spawn → /readyz 200): ${ORDER.map((n) => `${n} ${fmt(servers[n].readyMs)} ms`).join(', ')}${embedded ? `, embedded ${fmt(embedded.readyMs)} ms` : ''}.`,
    `Peak RSS (VmHWM, whole run): ${ORDER.map((n) => `${n} ${fmt(memory[n]?.hwm)} MiB`).join(', ')}${embedded ? `, embedded ${fmt(embedded.memory?.hwm)} MiB` : ''}.`,
    '',
    'Targets of issue 13 (reported, not asserted; computed from the table above):',
    ...targets.map((t) => `  ${t.met === null ? 'n/a    ' : t.met ? 'met    ' : 'NOT met'}  ${t.target}: ${t.value}`),
    ...(plans
      ? [
          '',
          'Query plans (EXPLAIN ANALYZE on the seeded table; full text in the JSON):',
          ...Object.entries(plans).map(([name, p]) => {
            const node =
              p.plan
                .find((l) => /Scan/.test(l))
                ?.trim()
                .replace(/\s+\(cost=.*$/, '') ?? p.plan[0];
            const time = p.plan.find((l) => l.startsWith('Execution Time'));
            return `  ${name.padEnd(46)} ${node.replace(/^->\s*/, '')}; ${time}`;
          }),
        ]
      : []),
    ...(warnings.length ? ['', 'Warnings:', ...warnings.map((w) => `  - ${w}`)] : []),
    ...(ledgers.length
      ? [
          '',
          `Cost ledger, ${PROFILE} (bench/ledger.mjs): one extra profiled run per server, not in the table; each sample goes to the nearest layer on its stack; µs/req = share of busy samples × that run's CPU µs/req (${ledgers.map((l) => `${l.name} ${fmt(l.reqPerSec)} req/s`).join(', ')}).`,
          `Profiles: ${ledgers.map((l) => path.relative(ROOT, l.file)).join(', ')}`,
          '',
          formatLedger(ledgers.map((l) => ({ name: l.name, ledger: l.ledger, cpuUsPerReq: l.cpuUsPerReq }))),
        ]
      : []),
    ...(serviceLedger
      ? ['', `CPU profile of the service during ${PROFILE}, top functions:`, formatSummary(serviceLedger.summary)]
      : []),
    '',
    `JSON: ${path.relative(ROOT, file)}`,
  ];
  console.log(out.join('\n'));
}

/** The targets of issue 13, each from the table's rows; `met: null` when a server it needs was not run. */
function computeTargets(rows, servers, embedded) {
  const row = (scenario, server) => rows.find((r) => r.scenarioName === scenario && r.server === server);
  const ran = (scenario) => SCENARIOS.some((s) => s.name === scenario);
  const targets = [];
  const ratioTarget = (scenario, label, min) => {
    if (!ran(scenario)) return;
    const s = row(scenario, 'service');
    const ok = s && s.vsRaw !== null;
    targets.push({
      target: `${label} ≥ ${min}x raw req/s`,
      value: ok ? `${times(s.vsRaw)} (${fmt(s.reqPerSec)} of ${fmt(row(scenario, 'raw').reqPerSec)})` : 'n/a (needs service and raw)',
      met: ok ? s.vsRaw >= min : null,
    });
  };
  const p99Target = (scenario, label) => {
    if (!ran(scenario)) return;
    const s = row(scenario, 'service');
    targets.push({
      target: `${label} p99 ≤ 25 ms at ${CONNECTIONS} connections`,
      value: s ? `${fmt(s.p99Ms, 1)} ms` : 'n/a (needs service)',
      met: s ? s.p99Ms <= 25 : null,
    });
  };
  ratioTarget('listPets', 'listPets limit=20', 0.5);
  p99Target('listPets', 'listPets limit=20');
  ratioTarget('getPet', 'getPet', 0.5);
  p99Target('getPet', 'getPet');
  ratioTarget('listPetsStatus', 'listPets status=sold limit=100', 0.5);
  ratioTarget('createPet', 'createPet', 0.35);
  const svc = rows.filter((r) => r.server === 'service');
  if (servers.service && servers.peer) {
    targets.push({
      target: 'service ≥ 1.0x peer req/s on every scenario',
      value: svc.map((r) => `${r.scenarioName} ${times(r.vsPeer)}`).join(', '),
      met: svc.every((r) => r.vsPeer >= 1),
    });
  } else targets.push({ target: 'service ≥ 1.0x peer req/s on every scenario', value: 'n/a (needs service and peer)', met: null });
  if (servers.service && servers.raw) {
    const ratios = svc.map((r) => ({ name: r.scenarioName, x: r.rssAfterMiB / row(r.scenarioName, 'raw').rssAfterMiB, mib: r.rssAfterMiB, raw: row(r.scenarioName, 'raw').rssAfterMiB }));
    targets.push({
      target: 'RSS after load ≤ 2x raw\'s RSS after load (every scenario)',
      value: ratios.map((r) => `${r.name} ${fmt(r.mib)}/${fmt(r.raw)} MiB = ${times(r.x)}`).join(', '),
      met: ratios.every((r) => r.x <= 2),
    });
  } else targets.push({ target: 'RSS after load ≤ 2x raw\'s', value: 'n/a (needs service and raw)', met: null });
  if (servers.service)
    targets.push({
      target: 'start to ready ≤ 2 s (spawn → /readyz 200, PostgreSQL)',
      value: `${fmt(servers.service.readyMs)} ms`,
      met: servers.service.readyMs <= 2000,
    });
  if (embedded)
    targets.push({ target: 'start to ready ≤ 2 s (embedded default)', value: `${embedded.readyMs} ms`, met: embedded.readyMs <= 2000 });
  return targets;
}

/**
 * BENCH_SOAK: the service alone under listPets at full load for BENCH_SOAK_MINUTES, VmRSS every
 * 10 s. A leak shows as RSS still climbing after the first minute (when V8's heap has sized itself).
 */
async function soak(warnings) {
  const startedAt = new Date().toISOString();
  const loadBefore = os.loadavg()[0];
  if (loadBefore > 1.5) log(`warning: 1-minute load average ${loadBefore.toFixed(2)} before the soak`);
  const scenario = ALL_SCENARIOS.find((s) => s.name === 'listPets');
  const { db, key, prefix, prefixSupported } = await prepare(warnings);
  const port = await freePort(FIRST_PORT);
  const service = await startServer('service', [path.join(DIST, 'main.js')], serviceEnvFor(db, port, prefix, prefixSupported), port);
  const features = await probeFeatures(service, key);
  if (features.keyedStatus !== 200) throw new Error(`GET /v1/pets with the bench key answered ${features.keyedStatus}`);
  const seconds = Math.round(SOAK_MINUTES * 60);
  log(`soak: ${scenario.label} at ${CONNECTIONS} connections for ${seconds} s, VmRSS every ${SOAK_SAMPLE_S} s`);
  const samples = [];
  const t0 = performance.now();
  const timer = setInterval(() => {
    const m = memoryOf(service.child.pid);
    const tS = Math.round((performance.now() - t0) / 1000);
    samples.push({ tS, rssMiB: m ? Math.round(m.rss) : null });
    log(`soak ${tS} s: RSS ${m ? Math.round(m.rss) : '?'} MiB`);
  }, SOAK_SAMPLE_S * 1000);
  await gcWindow(service);
  const r = await load(service, scenario, key, seconds);
  clearInterval(timer);
  samples.push({ tS: Math.round((performance.now() - t0) / 1000), rssMiB: r.rssAfterMiB });
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
    value: growth === null ? 'n/a' : `${fmt(ref.rssMiB)} → ${fmt(end.rssMiB)} MiB (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}%)`,
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
      `${fmt(r.reqPerSec)} req/s, p50 ${fmt(r.p50Ms, 1)} ms, p99 ${fmt(r.p99Ms, 1)} ms, p99.9 ${fmt(r.p999Ms, 1)} ms, errors ${r.errors}, non-2xx ${r.non2xx}, CPU ${fmt(r.cpuUsPerReq)} µs/req`,
      `GC: ${r.loop.gc.count} pauses, ${fmt(r.loop.gc.totalMs)} ms in total, longest ${fmt(r.loop.gc.maxMs, 1)} ms; event-loop delay p50 ${fmt(r.loop.eventLoopDelayMs.p50, 1)} ms, p99 ${fmt(r.loop.eventLoopDelayMs.p99, 1)} ms, max ${fmt(r.loop.eventLoopDelayMs.max, 1)} ms`,
      `RSS (MiB) every ${SOAK_SAMPLE_S} s: ${samples.map((s) => `${s.tS}s ${s.rssMiB}`).join(', ')}`,
      '',
      `  ${target.met === null ? 'n/a    ' : target.met ? 'met    ' : 'NOT met'}  ${target.target}: ${target.value}`,
      ...(warnings.length ? ['', 'Warnings:', ...warnings.map((w) => `  - ${w}`)] : []),
      '',
      `JSON: ${path.relative(ROOT, file)}`,
    ].join('\n'),
  );
}

let exitCode = 0;
try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : err}`);
  exitCode = 1;
} finally {
  await cleanup();
  // Keep the logs of a failed run for reading, and the profiles of a profiled one; a good run
  // leaves nothing else behind.
  for (const f of readdirSync(WORK))
    if (f.startsWith(RUN_ID) && (exitCode === 0 ? !f.endsWith('.cpuprofile') : f.endsWith('.gc.json')))
      rmSync(path.join(WORK, f), { recursive: true, force: true });
}
process.exit(exitCode);
