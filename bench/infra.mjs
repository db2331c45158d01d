// `npm run bench:infra`: the service on the production infrastructure, each setup beside the
// direct one: PostgreSQL through Debian's PgBouncer (transaction mode, `pgbouncer=true`), rate
// limits in a Redis Cluster (3 masters, 3 replicas) and behind Sentinel (master, replica, 3
// sentinels), and traces exported over OTLP/HTTP at 100% and at 1% sampling (to a receiver in this
// process that reads and discards them). One instance at a time, production settings (info access
// logs to a file, Redis counters, metrics behind a token), on the Node running this script.
//
// Builds the service into .tmp/bench-infra-dist, creates and seeds a fresh database (10,000 pets),
// issues an enterprise key, then for each setup starts its processes, loads the instance with
// autocannon (listPets limit=20 and createPet), twice in alternating order, and prints requests,
// errors and req/s beside direct. Writes JSON to bench/results/. Everything it starts is stopped
// by its pid, and the database and temp directories are removed, also on failure.
//
// Environment (all optional):
//   BENCH_DURATION     seconds of measured load per run (6), after 2 s of warm-up
//   BENCH_CONNECTIONS  concurrent connections (32)
//   BENCH_PG_URL       PostgreSQL for CREATE/DROP DATABASE (postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_REDIS_URL    the single Redis of the direct setup (redis://127.0.0.1:6379)
//   BENCH_SETUPS       comma-separated: direct,pgbouncer,tracing100,tracing1,cluster,sentinel (all)
//   BENCH_SCENARIOS    comma-separated: listPets,createPet (both)
// Needs pgbouncer (Debian's package: apt-get install -y pgbouncer) and redis-server/redis-cli.
/* global fetch, AbortSignal */
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort, waitFor } from '../test/support/local-servers.mjs';
import { cleanup, cleanups, log, startCluster, startPooler, startReceiver, startSentinel } from './infra-processes.mjs';
import { createDisposableDatabase, issueUnlimitedKey } from './pg-admin.mjs';
import { SERVICE_NODE_FLAGS } from './service-flags.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(ROOT);
const DIST = path.join(ROOT, '.tmp/bench-infra-dist');
const RESULTS = path.join(ROOT, 'bench/results');

const DURATION = Number(process.env.BENCH_DURATION || 6);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 32);
const PG_ADMIN_URL = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const ALL_SETUPS = ['direct', 'pgbouncer', 'tracing100', 'tracing1', 'cluster', 'sentinel'];
const SETUPS = process.env.BENCH_SETUPS ? process.env.BENCH_SETUPS.split(',').map((s) => s.trim()) : ALL_SETUPS;
for (const s of SETUPS)
  if (!ALL_SETUPS.includes(s)) throw new Error(`BENCH_SETUPS: unknown setup "${s}" (${ALL_SETUPS.join(', ')})`);
const ALL_SCENARIOS = {
  listPets: { method: 'GET', path: '/v1/pets?limit=20' },
  createPet: {
    method: 'POST',
    path: '/v1/pets',
    headers: { 'content-type': 'application/json' },
    body: '{"name":"Bench pet","categoryId":7,"status":"pending"}',
  },
};
const SCENARIOS = process.env.BENCH_SCENARIOS
  ? process.env.BENCH_SCENARIOS.split(',').map((s) => s.trim())
  : Object.keys(ALL_SCENARIOS);
const METRICS_TOKEN = `bench-${randomBytes(12).toString('hex')}`;
// Production refuses to start without the secret that signs version 2 keys.
const API_KEY_CHECKSUM_SECRET = randomBytes(32).toString('base64');
const RUN_ID = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

// --- the database ---------------------------------------------------------------------------

const SEED_SQL = `
INSERT INTO "pets" ("name", "category_id", "status", "created_at", "updated_at")
SELECT 'Pet ' || i, 1 + i % 50,
       (CASE WHEN i % 100 < 60 THEN 'available' WHEN i % 100 < 95 THEN 'pending' ELSE 'sold' END)::"PetStatus",
       now(), now()
FROM generate_series(1, 10000) AS i;
ANALYZE "pets";`;

function createDatabase() {
  return createDisposableDatabase(PG_ADMIN_URL, `animal_bench_infra_${RUN_ID}`, cleanups);
}

/** What every process of the built service gets: production mode and the bench's secrets. */
const productionEnv = (vars) => ({
  PATH: process.env.PATH ?? '',
  NODE_ENV: 'production',
  METRICS_TOKEN,
  API_KEY_CHECKSUM_SECRET,
  ...vars,
});

function node(script, vars) {
  return execFileSync(process.execPath, [path.join(DIST, script)], {
    cwd: ROOT,
    env: productionEnv({ LOG_LEVEL: 'warn', ...vars }),
    encoding: 'utf8',
  });
}

function issueKey(databaseUrl) {
  return issueUnlimitedKey(
    path.join(DIST, 'cli/apikey.js'),
    `bench ${RUN_ID}`,
    productionEnv({ DATABASE_URL: databaseUrl }),
  );
}

// --- the service under load -----------------------------------------------------------------

async function startService(name, env) {
  const port = await freePort();
  const logFile = path.join(ROOT, '.tmp', `bench-infra-${RUN_ID}-${name}.log`);
  const fd = openSync(logFile, 'w');
  const proc = spawn(process.execPath, [...SERVICE_NODE_FLAGS, path.join(DIST, 'main.js')], {
    cwd: ROOT,
    env: productionEnv({
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}/v1`,
      STAGING_BASE_URL: `http://127.0.0.1:${port}/v1`,
      RATE_LIMIT_PREFIX: `bench-infra:${RUN_ID}:`,
      ...env,
    }),
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => {
        if (proc.exitCode !== null) throw new Error('exited');
        const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
        const body = await res.text();
        return res.status === 200 && body.includes('"status":"ok"');
      },
      { what: `${name} to be ready`, timeoutMs: 60_000, intervalMs: 50 },
    );
  } catch (err) {
    proc.kill('SIGKILL');
    throw new Error(`${name}: ${err.message}\n${readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n')}`, {
      cause: err,
    });
  }
  return {
    url,
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r)));
      rmSync(logFile, { force: true });
    },
  };
}

async function load(url, key, scenario, seconds) {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${key}` },
    requests: [ALL_SCENARIOS[scenario]],
  });
  return {
    requests: result.requests.total,
    errors: result.errors + result.timeouts + result.non2xx,
    reqPerSec: Math.round(result.requests.average),
    p99Ms: result.latency.p99,
  };
}

async function main() {
  log('building the service into .tmp/bench-infra-dist');
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', DIST], {
    stdio: 'inherit',
  });
  const db = await createDatabase();
  log(`database ${db.name}: migrating and seeding`);
  node('database/migrate.main.js', { DATABASE_URL: db.url });
  const seed = new pg.Client({ connectionString: db.url });
  await seed.connect();
  await seed.query(SEED_SQL);
  await seed.end();
  const key = issueKey(db.url);

  const direct = { DATABASE_URL: db.url, REDIS_URL };
  const envs = {};
  for (const setup of SETUPS) {
    if (setup === 'direct') envs.direct = direct;
    if (setup === 'pgbouncer') {
      const pooled = await startPooler(db.url);
      // The migrate command as a deployment runs it behind a pooler: gives the role its statement timeout.
      node('database/migrate.main.js', { DATABASE_URL: pooled, DIRECT_URL: db.url });
      envs.pgbouncer = { ...direct, DATABASE_URL: pooled };
    }
    if (setup === 'tracing100' || setup === 'tracing1') {
      const receiver = await startReceiver();
      envs[setup] = {
        ...direct,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        ...(setup === 'tracing1'
          ? { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' }
          : {}),
      };
      envs[setup].receiver = receiver.received;
    }
    if (setup === 'cluster') envs.cluster = { DATABASE_URL: db.url, ...(await startCluster()) };
    if (setup === 'sentinel') envs.sentinel = { DATABASE_URL: db.url, ...(await startSentinel()) };
  }

  // One unmeasured run first: the fresh database's caches and the first process's start are
  // nobody's cost.
  {
    const svc = await startService('warm-up', envs[SETUPS[0]].receiver ? direct : envs[SETUPS[0]]);
    try {
      for (const scenario of SCENARIOS) await load(svc.url, key, scenario, 4);
    } finally {
      await svc.stop();
    }
  }

  const results = {};
  for (const scenario of SCENARIOS) {
    // Two passes in opposite orders, so drift (a warming database, a busy neighbour) evens out.
    for (const order of [SETUPS, [...SETUPS].reverse()]) {
      for (const setup of order) {
        const { receiver, ...env } = envs[setup];
        const svc = await startService(setup, env);
        try {
          await load(svc.url, key, scenario, 2);
          const r = await load(svc.url, key, scenario, DURATION);
          log(
            `${scenario} ${setup}: ${r.requests} requests, ${r.errors} errors, ${r.reqPerSec} req/s, p99 ${r.p99Ms} ms`,
          );
          (results[scenario] ??= {})[setup] ??= [];
          results[scenario][setup].push(r);
        } finally {
          await svc.stop();
        }
        if (receiver) log(`  OTLP receiver so far: ${receiver.exports} exports, ${receiver.bytes} bytes`);
      }
    }
  }

  const rows = [];
  for (const scenario of SCENARIOS) {
    const base = results[scenario].direct;
    const mean = (runs, f) => runs.reduce((a, r) => a + r[f], 0) / runs.length;
    for (const setup of SETUPS) {
      const runs = results[scenario][setup];
      const reqPerSec = Math.round(mean(runs, 'reqPerSec'));
      rows.push({
        scenario,
        setup,
        requests: runs.reduce((a, r) => a + r.requests, 0),
        errors: runs.reduce((a, r) => a + r.errors, 0),
        reqPerSec,
        p99Ms: Math.round(mean(runs, 'p99Ms') * 10) / 10,
        vsDirect: base ? `${Math.round((reqPerSec / mean(base, 'reqPerSec')) * 100)}%` : '',
      });
    }
  }
  console.log(
    `\nbench:infra, ${CONNECTIONS} connections, ${DURATION} s x 2 runs per setup, Node ${process.version}, ${os.cpus().length} cores`,
  );
  console.log('| scenario | setup | requests | errors | req/s | p99 ms | vs direct |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.scenario} | ${r.setup} | ${r.requests} | ${r.errors} | ${r.reqPerSec} | ${r.p99Ms} | ${r.vsDirect} |`,
    );
  mkdirSync(RESULTS, { recursive: true });
  const file = path.join(RESULTS, `infra-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ connections: CONNECTIONS, durationS: DURATION, node: process.version, rows }, null, 2)}\n`,
  );
  log(`wrote ${path.relative(ROOT, file)}`);
  if (!existsSync(file)) process.exitCode = 1;
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(cleanup);
