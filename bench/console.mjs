// `npm run bench:console`: the operator console's requests at scale. Builds the service into
// .tmp/bench-dist, creates a fresh database, applies the migrations and seeds 10,000 keys,
// 1,680,000 usage rows and a few audit entries per key (bench/console-data.mjs), issues an admin
// token with the key tool, starts the service with its admin listener, and requests each row of
// bench/console-routes.mjs one at a time: a warm-up, then the measured requests (p50, p95, max;
// the target: p95 at most 250 ms). Then each row once more through a relay that records the SQL
// it sends (bench/sql-capture.mjs), and EXPLAIN (ANALYZE, BUFFERS) of every read, checked for
// sequential scans of the big tables. Prints the table; writes the figures and plans to
// bench/results/console-<start time>.json and .txt. The database is dropped at the end.
//
// Environment (all optional; BENCH_PG_URL, BENCH_REDIS_URL, BENCH_PORT, BENCH_NODE and
// BENCH_SKIP_BUILD as for `npm run bench`, bench/run.mjs):
//   BENCH_CONSOLE_REQUESTS  measured requests per row (200)
//   BENCH_CONSOLE_WARMUP    unmeasured requests per row before them (20)
//   BENCH_CONSOLE_ONLY      comma-separated parts of row names: only the rows whose name has one
/* global fetch, AbortSignal, URLSearchParams */
import { Buffer } from 'node:buffer';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { URL } from 'node:url';
import pg from 'pg';
import { freePort } from '../test/support/local-servers.mjs';
import { CONSOLE_KEYS, seedConsoleData } from './console-data.mjs';
import { CONSOLE_ROUTES, routeContext } from './console-routes.mjs';
import { issueAdminToken } from './pg-admin.mjs';
import { cleanup, cleanups, startServer } from './processes.mjs';
import { build, createDatabase, deleteRedisKeysUnder, migrate, serviceEnvFor } from './setup.mjs';
import { startSqlCapture } from './sql-capture.mjs';
import {
  API_KEY_CHECKSUM_SECRET,
  API_KEY_PEPPER,
  DIST,
  FIRST_PORT,
  METRICS_TOKEN,
  NODE_VERSION,
  PG_ADMIN_URL,
  RESULTS,
  RUN_ID,
  SERVICE_NODE_FLAGS,
  WORK,
  distModule,
  log,
  num,
} from './settings.mjs';

const REQUESTS = num('BENCH_CONSOLE_REQUESTS', 200);
const WARMUP = num('BENCH_CONSOLE_WARMUP', 20);
const ONLY = process.env.BENCH_CONSOLE_ONLY?.split(',').map((s) => s.trim());
/** The bar: every console page and admin route at most this at p95. */
export const TARGET_P95_MS = 250;
/** Tables big enough at this scale that a sequential scan of one fails the check. */
const BIG_TABLES = ['api_keys', 'key_usage', 'audit_log'];
/** The key the per-key rows read: one of the busiest (every hundredth key is). */
const BUSY_KEY_ID = 4200;

/** The value at quantile q of sorted numbers (nearest rank). */
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

/** The console's session cookie for `token`, from its sign-in form. */
async function signIn(base, token) {
  const res = await fetch(`${base}/admin/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
    body: new URLSearchParams({ token }).toString(),
    redirect: 'manual',
  });
  const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]);
  await res.arrayBuffer();
  if (cookie.length === 0) throw new Error(`POST /admin/sign-in answered ${res.status} without a cookie`);
  return cookie.join('; ');
}

async function request(base, row, ctx, headers) {
  const t0 = performance.now();
  // A redirect (to the sign-in page, say) is not the answer measured: it fails the row.
  const res = await fetch(base + row.path(ctx), {
    headers: headers[row.auth],
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
  const body = await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status !== 200) {
    throw new Error(
      `${row.name}: ${row.path(ctx)} answered ${res.status}: ${Buffer.from(body).toString().slice(0, 300)}`,
    );
  }
  return ms;
}

/** The reads among a request's statements (the others change data, so they are not run again). */
const isRead = (sql) => /^\s*(SELECT|WITH)\b/i.test(sql) && !/^\s*SELECT\s+1\s*$/i.test(sql);

async function explain(client, { sql, params }) {
  if (params.some((p) => p !== null && typeof p === 'object'))
    return { sql, params, plan: ['(a binary parameter: not explained)'], seqScans: [] };
  const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  const plan = rows.map((r) => r['QUERY PLAN']);
  const seqScans = BIG_TABLES.filter((t) => plan.some((l) => new RegExp(`Seq Scan on "?${t}"?\\b`).test(l)));
  return { sql, params, plan, seqScans };
}

async function main() {
  const started = new Date();
  mkdirSync(WORK, { recursive: true });
  mkdirSync(RESULTS, { recursive: true });
  const warnings = build(false);
  const db = await createDatabase(`animal_bench_console_${RUN_ID}`);
  log(`database ${db.name} (PostgreSQL ${db.version}): migrating and seeding the console's dataset`);
  await migrate(db.url);
  const seedMs = await seedConsoleData(db.url, log);

  const pgUrl = new URL(PG_ADMIN_URL);
  const capture = await startSqlCapture({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
  cleanups.push(() => capture.close());
  const relayed = new URL(db.url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(capture.port);

  const secrets = { METRICS_TOKEN, API_KEY_CHECKSUM_SECRET, API_KEY_PEPPER };
  const token = issueAdminToken(path.join(DIST, 'cli/apikey.js'), `bench-console-${RUN_ID}`, {
    ...secrets,
    DATABASE_URL: db.url,
  });
  const prefix = `bench:${RUN_ID}:`;
  cleanups.push(() => deleteRedisKeysUnder(prefix));
  // Two instances on the database: one measured, connected to it directly; one connected through
  // the relay, whose requests show the SQL each row sends.
  const envOn = async (url, from) => {
    const port = await freePort(from);
    const adminPort = await freePort(port + 1);
    const env = { ...serviceEnvFor({ url }, port, prefix, true), ADMIN_PORT: String(adminPort), LOG_LEVEL: 'warn' };
    return { port, adminPort, env };
  };
  const entry = path.join(DIST, 'main.js');
  const measured = await envOn(db.url, FIRST_PORT);
  await startServer('service', [...SERVICE_NODE_FLAGS, entry], measured.env, measured.port);
  const traced = await envOn(relayed.toString(), measured.adminPort + 1);
  await startServer('service', [...SERVICE_NODE_FLAGS, entry], traced.env, traced.port, { tag: 'service-sql' });
  const base = `http://127.0.0.1:${measured.adminPort}`;
  const tracedBase = `http://127.0.0.1:${traced.adminPort}`;

  const probe = new pg.Client({ connectionString: db.url });
  await probe.connect();
  cleanups.push(() => probe.end());
  const { rows } = await probe.query('SELECT "prefix", "name" FROM "api_keys" WHERE "id" = $1', [BUSY_KEY_ID]);
  const { encodeAdminCursor } = await distModule('admin/admin-paging.js');
  const ctx = routeContext({
    now: Date.now(),
    busyKeyId: BUSY_KEY_ID,
    // As an operator pastes a key from a leak report: its first characters and more.
    keyPrefix: `${rows[0].prefix}Q7xZp2`,
    // A part of one name, in another case: the number of a key and a letter of its name's end.
    nameFragment: encodeURIComponent(rows[0].name.toLowerCase().slice(-7)),
    farCursor: encodeAdminCursor(BigInt(CONSOLE_KEYS - 500)),
  });

  const routes = CONSOLE_ROUTES.filter((r) => !ONLY || ONLY.some((o) => r.name.includes(o)));
  const headers = { token: { authorization: `Bearer ${token}` } };
  const tracedHeaders = { ...headers };
  if (routes.some((r) => r.auth === 'session')) {
    headers.session = { cookie: await signIn(base, token) };
    tracedHeaders.session = { cookie: await signIn(tracedBase, token) };
  }

  const results = [];
  for (const row of routes) {
    for (let i = 0; i < WARMUP; i++) await request(base, row, ctx, headers);
    const times = [];
    for (let i = 0; i < REQUESTS; i++) times.push(await request(base, row, ctx, headers));
    times.sort((a, b) => a - b);
    const result = {
      name: row.name,
      path: row.path(ctx),
      p50: quantile(times, 0.5),
      p95: quantile(times, 0.95),
      max: times[times.length - 1],
    };
    result.met = result.p95 <= TARGET_P95_MS;
    await request(tracedBase, row, ctx, tracedHeaders); // the relayed instance's first time on this row
    capture.start();
    await request(tracedBase, row, ctx, tracedHeaders);
    result.statements = [];
    for (const s of capture.stop().filter((s) => isRead(s.sql))) result.statements.push(await explain(probe, s));
    result.seqScans = [...new Set(result.statements.flatMap((s) => s.seqScans))];
    results.push(result);
    log(`${row.name}: p95 ${result.p95.toFixed(1)} ms`);
  }

  const fmt = (ms) => ms.toFixed(1).padStart(8);
  const lines = [
    `${'route'.padEnd(34)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'max ms'.padStart(8)}  met  seq scans`,
    ...results.map(
      (r) =>
        `${r.name.padEnd(34)} ${fmt(r.p50)} ${fmt(r.p95)} ${fmt(r.max)}  ${r.met ? 'yes' : 'NO '}  ${r.seqScans.join(', ') || '-'}`,
    ),
  ];
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const header = [
    `npm run bench:console, ${started.toISOString()}: ${REQUESTS} requests per row one at a time after ${WARMUP} of warm-up,`,
    `Node ${NODE_VERSION}, PostgreSQL ${db.version}; target p95 <= ${TARGET_P95_MS} ms; seed ${JSON.stringify(seedMs)} ms`,
    ...warnings.map((w) => `warning: ${w}`),
  ];
  console.log(['', ...header, '', ...lines].join('\n'));
  const planText = results.flatMap((r) => [
    '',
    `## ${r.name}: GET ${r.path}`,
    ...r.statements.flatMap((s) => [
      '',
      s.sql,
      `parameters: ${JSON.stringify(s.params)}`,
      ...s.plan.map((l) => `  ${l}`),
    ]),
  ]);
  writeFileSync(path.join(RESULTS, `console-${stamp}.txt`), [...header, '', ...lines, ...planText, ''].join('\n'));
  writeFileSync(
    path.join(RESULTS, `console-${stamp}.json`),
    JSON.stringify(
      { started, node: NODE_VERSION, postgres: db.version, requests: REQUESTS, warmup: WARMUP, seedMs, results },
      null,
      2,
    ),
  );
  log(`results in bench/results/console-${stamp}.json and .txt (the plans)`);
  const failed = results.filter((r) => !r.met || r.seqScans.length);
  if (failed.length) {
    console.log(`\n${failed.length} row(s) over ${TARGET_P95_MS} ms at p95 or scanning a big table sequentially`);
    process.exitCode = 1;
  }
}

try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await cleanup();
}
