// `npm run bench`: the service against a raw node:http + pg baseline (bench/baseline.mjs), on
// real PostgreSQL and Redis, then the embedded default. See README, "Performance".
//
// Builds the service into .tmp/bench-dist (never dist/), creates and seeds a fresh database,
// issues an enterprise API key when the service has the key tool, starts both servers, loads
// each with autocannon, alternating service and baseline per scenario, prints a table and
// writes JSON to bench/results/. Everything it creates is removed at the end, also on failure.
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
//   BENCH_EMBEDDED=0    skip the embedded-database runs
//   BENCH_PROFILE=1     CPU-profile the PostgreSQL service during the measured listPets run (or
//                       BENCH_PROFILE=<scenario>) and print the top functions (bench/cpu-profiler.mjs)
//   BENCH_SKIP_BUILD=1  reuse .tmp/bench-dist as it is
//   BENCH_NODE_OPTIONS  NODE_OPTIONS for the service processes (e.g. --max-semi-space-size=8)
//   BENCH_NODE          the Node.js both servers run on: a major version fetched from the npm
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
import { formatSummary, summarise } from './profile-summary.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(ROOT);
const DIST = path.join(ROOT, '.tmp/bench-dist');
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
const PROFILE =
  !process.env.BENCH_PROFILE || process.env.BENCH_PROFILE === '0'
    ? null
    : process.env.BENCH_PROFILE === '1'
      ? 'listPets'
      : process.env.BENCH_PROFILE;
const EMBEDDED = process.env.BENCH_EMBEDDED !== '0';

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

const SCENARIOS = [
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
].filter((s) => !process.env.BENCH_ONLY || process.env.BENCH_ONLY.split(',').includes(s.name));

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

/** Starts `node <args>` with output to a log file; resolves once /readyz answers 200. */
async function startServer(name, args, env, port) {
  const logFile = path.join(WORK, `${RUN_ID}-${name}.log`);
  const fd = openSync(logFile, 'w');
  const t0 = performance.now();
  const child = spawn(NODE_BIN, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
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
        return { name, child, url, port, logFile, readyMs };
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
  const lines0 = lineCount(server.logFile);
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${key}` },
    requests: [scenario.request],
  });
  clearInterval(timer);
  sample();
  const cpu1 = cpuMsOf(server.child.pid);
  const total = result.requests.total;
  return {
    reqPerSec: Math.round(result.requests.average),
    requests: total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    status2xx: result['2xx'],
    peakRssMiB: peakRss ? Math.round(peakRss) : null,
    cpuUsPerReq: cpu0 !== null && cpu1 !== null && total > 0 ? Math.round(((cpu1 - cpu0) * 1000) / total) : null,
    logLinesPerReq: total > 0 ? Math.round(((lineCount(server.logFile) - lines0) / total) * 100) / 100 : null,
  };
}

async function measure(server, scenario, key) {
  if (WARMUP > 0) await load(server, scenario, key, WARMUP);
  const profiling = server.profileFile && scenario.name === PROFILE;
  if (profiling) server.child.kill('SIGUSR2'); // starts the profiler (bench/cpu-profiler.mjs)
  const r = await load(server, scenario, key, DURATION);
  if (profiling) {
    server.child.kill('SIGUSR2'); // stops it and writes the profile
    const deadline = Date.now() + 10_000;
    while (!existsSync(server.profileFile) && Date.now() < deadline) await sleep(100);
    await sleep(500); // let the write finish
    server.profile = summarise(JSON.parse(readFileSync(server.profileFile, 'utf8')));
  }
  log(
    `${scenario.name.padEnd(15)} ${server.name.padEnd(9)} ${r.reqPerSec} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
  );
  return r;
}

function build() {
  if (process.env.BENCH_SKIP_BUILD === '1' && existsSync(path.join(DIST, 'main.js'))) return [];
  log('building the service into .tmp/bench-dist');
  try {
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', DIST], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return [];
  } catch (err) {
    // tsc still emits on type errors; a half-finished file elsewhere in the tree should not
    // stop a measurement, but the result says so.
    const out = `${err.stdout ?? ''}${err.stderr ?? ''}`.trim();
    if (!existsSync(path.join(DIST, 'main.js'))) throw new Error(`build failed:\n${out}`, { cause: err });
    log(`warning: the build reported type errors (the emitted code is measured anyway):\n${out}`);
    return [`build reported type errors: ${out.split('\n')[0]}`];
  }
}

const distModule = (rel) => import(pathToFileURL(path.join(DIST, rel)).href);

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
  if (existsSync(path.join(DIST, 'prisma/migrate.main.js'))) {
    execFileSync(process.execPath, [path.join(DIST, 'prisma/migrate.main.js')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } else {
    const { loadConfig } = await distModule('config/config.js');
    const { migratePostgres } = await distModule('prisma/database.js');
    await migratePostgres(loadConfig({ DATABASE_URL: databaseUrl }), () => {});
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
  const { openEmbedded } = await distModule('prisma/database.js');
  const db = await openEmbedded(
    loadConfig({ DATA_DIR: dataDir, NODE_ENV: 'production' }),
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
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', LOG_LEVEL: 'warn', ...env },
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

function configSupports(variable) {
  try {
    return readFileSync(path.join(ROOT, 'src/config/config.ts'), 'utf8').includes(`'${variable}'`);
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
  n === null || n === undefined
    ? '–'
    : Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function table(rows) {
  const header = [
    'Scenario',
    'Server',
    'req/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'non-2xx',
    'peak RSS MiB',
    'CPU µs/req',
    'vs baseline',
  ];
  const body = rows.map((r) => [
    r.scenario,
    r.server,
    fmt(r.reqPerSec),
    fmt(r.p50Ms),
    fmt(r.p99Ms),
    fmt(r.errors),
    fmt(r.non2xx),
    fmt(r.peakRssMiB),
    fmt(r.cpuUsPerReq),
    r.ratio === null || r.ratio === undefined ? '' : `${Math.round(r.ratio * 100)}%`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) =>
    `| ${cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((w, i) => (i < 2 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
    ...body.map(line),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------

async function main() {
  mkdirSync(WORK, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  const warnings = build();
  const startedAt = new Date().toISOString();
  const loadBefore = os.loadavg()[0];

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

  const servicePort = await freePort(FIRST_PORT);
  const baselinePort = await freePort(servicePort + 1);
  const serviceEnv = {
    NODE_ENV: 'production',
    DATABASE_URL: db.url,
    REDIS_URL,
    LOG_LEVEL: 'info',
    PUBLIC_BASE_URL: `http://127.0.0.1:${servicePort}/v1`,
    STAGING_BASE_URL: `http://127.0.0.1:${servicePort}/v1`,
    ...(prefixSupported ? { RATE_LIMIT_PREFIX: prefix } : {}),
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
  };
  const profileFile = path.join(WORK, `${RUN_ID}-${PROFILE}.cpuprofile`);
  const nodeArgs = PROFILE ? ['--import', pathToFileURL(path.join(ROOT, 'bench/cpu-profiler.mjs')).href] : [];
  const service = await startServer(
    'service',
    [...nodeArgs, path.join(DIST, 'main.js')],
    { ...serviceEnv, ...(PROFILE ? { BENCH_PROFILE_FILE: profileFile } : {}) },
    servicePort,
  );
  if (PROFILE) service.profileFile = profileFile;
  // The baseline sends the service's own read statements, when the service names them.
  const { PET_SQL } = await distModule('pets/pets.service.js').catch(() => ({}));
  const plans = await explainReads(db.url, PET_SQL);
  if (plans)
    for (const [name, p] of Object.entries(plans))
      if (!p.indexScan) warnings.push(`${name} is not served by an index scan`);
  const baseline = await startServer(
    'baseline',
    [path.join(ROOT, 'bench/baseline.mjs')],
    {
      DATABASE_URL: db.url,
      PUBLIC_BASE_URL: `http://127.0.0.1:${servicePort}/v1`,
      ...(PET_SQL ? { BENCH_PET_SQL: JSON.stringify(PET_SQL) } : {}),
    },
    baselinePort,
  );

  const features = await probeFeatures(service, key);
  features.redis = Boolean(REDIS_URL) && features.rateLimits;
  log(`active on the service: ${JSON.stringify(features)}`);
  if (features.keyedStatus !== 200) throw new Error(`GET /v1/pets with the bench key answered ${features.keyedStatus}`);

  // Same answers from both: the service and the baseline must be doing the same work.
  const auth = { authorization: `Bearer ${key}` };
  const same = {};
  for (const p of ['/v1/pets?limit=20', '/v1/pets?limit=100&status=sold', '/v1/pets/100']) {
    const [a, b] = await Promise.all([get(service.url + p, auth), get(baseline.url + p)]);
    same[p] = a.status === b.status && a.text === b.text && a.headers.get('link') === b.headers.get('link');
    if (!same[p]) {
      warnings.push(`service and baseline answer ${p} differently`);
      log(`${p}: service ${a.status} ${a.headers.get('link')} ${a.text.slice(0, 300)}`);
      log(`${p}: baseline ${b.status} ${b.headers.get('link')} ${b.text.slice(0, 300)}`);
    }
  }

  const runs = [];
  for (const [i, scenario] of SCENARIOS.entries()) {
    // Alternate which server goes first, so drift (table growth, caches) does not favour one.
    const order = i % 2 === 0 ? [service, baseline] : [baseline, service];
    const results = {};
    for (const server of order) results[server.name] = await measure(server, scenario, key);
    for (const name of ['service', 'baseline']) {
      runs.push({
        database: 'postgres',
        scenario: scenario.label,
        scenarioName: scenario.name,
        server: name,
        ...results[name],
        ratio: name === 'service' ? results.service.reqPerSec / results.baseline.reqPerSec : null,
      });
    }
  }
  const memory = { service: memoryOf(service.child.pid), baseline: memoryOf(baseline.child.pid) };
  if (features.rateLimits && prefixSupported) {
    const { redis, keys } = await redisKeysUnder(prefix);
    redis.disconnect();
    features.redisKeys = keys.length;
    features.redis = keys.length > 0;
  }

  const profile = service.profile ? { file: profileFile, scenario: PROFILE, summary: service.profile } : null;
  await Promise.all([stopProcess(service.child), stopProcess(baseline.child)]);

  // The embedded default: no DATABASE_URL, no REDIS_URL, a fresh DATA_DIR seeded the same way.
  let embedded = null;
  if (EMBEDDED) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-bench-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    log(`embedded database in ${dataDir}; seeding ${SEED_PETS} pets`);
    await seedEmbedded(dataDir);
    const embeddedKey = issueKey({ DATA_DIR: dataDir }) ?? 'bench-no-key';
    const port = await freePort(baselinePort + 1);
    const server = await startServer(
      'embedded',
      [path.join(DIST, 'main.js')],
      {
        NODE_ENV: 'production',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}/v1`,
        ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
      },
      port,
    );
    const embeddedFeatures = await probeFeatures(server, embeddedKey);
    for (const scenario of SCENARIOS) {
      const r = await measure(server, scenario, embeddedKey);
      const base = runs.find((x) => x.scenarioName === scenario.name && x.server === 'baseline');
      runs.push({
        database: 'embedded',
        scenario: scenario.label,
        scenarioName: scenario.name,
        server: 'service (embedded)',
        ...r,
        ratio: base ? r.reqPerSec / base.reqPerSec : null,
      });
    }
    embedded = { readyMs: Math.round(server.readyMs), features: embeddedFeatures, memory: memoryOf(server.child.pid) };
    await stopProcess(server.child);
  }

  // Targets (reported, not asserted).
  const svc = (name) =>
    runs.find((r) => r.database === 'postgres' && r.server === 'service' && r.scenarioName === name);
  const serviceRuns = runs.filter((r) => r.database === 'postgres' && r.server === 'service');
  const worstP99 = serviceRuns.reduce((m, r) => Math.max(m, r.p99Ms), 0);
  const peakRss = memory.service?.hwm ?? null;
  const targets = [
    svc('listPets') && {
      target: 'listPets limit 20 ≥ 50% of baseline req/s',
      value: `${Math.round(svc('listPets').ratio * 100)}%`,
      met: svc('listPets').ratio >= 0.5,
    },
    {
      target: 'p99 ≤ 25 ms at 64 connections (every service scenario)',
      value: `${worstP99} ms worst (${serviceRuns.map((r) => `${r.scenarioName} ${r.p99Ms}`).join(', ')})`,
      met: worstP99 <= 25,
    },
    svc('createPet') && {
      target: 'createPet ≥ 50% of baseline req/s',
      value: `${Math.round(svc('createPet').ratio * 100)}%`,
      met: svc('createPet').ratio >= 0.5,
    },
    {
      target: 'peak RSS ≤ 200 MiB (service, whole run, VmHWM)',
      value: peakRss === null ? 'n/a' : `${Math.round(peakRss)} MiB`,
      met: peakRss !== null && peakRss <= 200,
    },
    {
      target: 'start to ready ≤ 2 s (spawn → /readyz 200, PostgreSQL)',
      value: `${Math.round(service.readyMs)} ms`,
      met: service.readyMs <= 2000,
    },
  ].filter(Boolean);
  if (embedded) {
    targets.push({
      target: 'start to ready ≤ 2 s (embedded default)',
      value: `${embedded.readyMs} ms`,
      met: embedded.readyMs <= 2000,
    });
  }

  const cpus = os.cpus();
  const result = {
    startedAt,
    finishedAt: new Date().toISOString(),
    settings: {
      durationS: DURATION,
      warmupS: WARMUP,
      connections: CONNECTIONS,
      seedPets: SEED_PETS,
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
      loadAverage1m: { before: loadBefore, after: os.loadavg()[0] },
    },
    features,
    responsesIdentical: same,
    startToReadyMs: {
      service: Math.round(service.readyMs),
      baseline: Math.round(baseline.readyMs),
      embedded: embedded?.readyMs ?? null,
    },
    memoryMiB: {
      service: memory.service && { rss: Math.round(memory.service.rss), peak: Math.round(memory.service.hwm) },
      baseline: memory.baseline && { rss: Math.round(memory.baseline.rss), peak: Math.round(memory.baseline.hwm) },
      embedded: embedded?.memory && { rss: Math.round(embedded.memory.rss), peak: Math.round(embedded.memory.hwm) },
    },
    embeddedFeatures: embedded?.features ?? null,
    runs,
    targets,
    queryPlans: plans,
    profile: profile && { file: path.relative(ROOT, profile.file), scenario: profile.scenario, ...profile.summary },
    warnings,
  };
  const file = path.join(RESULTS, `${startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);

  const on = (b) => (b ? 'on' : 'OFF');
  const out = [
    '',
    `Animal Store API benchmark — ${result.machine.cpu}, ${result.machine.memoryGiB} GiB, Node ${NODE_VERSION}, PostgreSQL ${db.version}, Redis ${result.machine.redis ?? 'n/a'}`,
    `${CONNECTIONS} connections, ${DURATION} s per run after ${WARMUP} s warm-up; ${SEED_PETS} seeded pets; load generator on the same machine (load average ${loadBefore.toFixed(1)} before, ${os.loadavg()[0].toFixed(1)} after).`,
    `Service: auth ${on(features.auth)}, rate limits ${on(features.rateLimits)}${features.rateLimits ? ` (${features.redis ? 'Redis' : 'not confirmed in Redis'})` : ''}, request logging ${on(features.requestLogging)} (LOG_LEVEL=info, to a file).`,
    '',
    table(runs),
    '',
    `Start to ready (spawn → /readyz 200): service ${fmt(service.readyMs)} ms, baseline ${fmt(baseline.readyMs)} ms${embedded ? `, embedded ${fmt(embedded.readyMs)} ms` : ''}.`,
    `Peak RSS (VmHWM, whole run): service ${fmt(memory.service?.hwm)} MiB, baseline ${fmt(memory.baseline?.hwm)} MiB${embedded ? `, embedded ${fmt(embedded.memory?.hwm)} MiB` : ''}.`,
    '',
    'Targets (reported, not asserted):',
    ...targets.map((t) => `  ${t.met ? 'met    ' : 'NOT met'}  ${t.target}: ${t.value}`),
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
    ...(profile
      ? [
          '',
          `CPU profile of the service during ${profile.scenario}: ${path.relative(ROOT, profile.file)}`,
          formatSummary(profile.summary),
        ]
      : []),
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
  // Keep the logs of a failed run for reading; a good run leaves nothing behind.
  if (exitCode === 0 && !PROFILE) {
    for (const f of readdirSync(WORK))
      if (f.startsWith(RUN_ID)) rmSync(path.join(WORK, f), { recursive: true, force: true });
  }
}
process.exit(exitCode);
