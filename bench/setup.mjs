// What the bench prepares before and beside the servers: the builds, the databases and their
// seed, and what it asks of the service (its features) and of Redis.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { URL } from 'node:url';
import pg from 'pg';
import { issueKey, manyKeys, MANY_KEYS } from './keys.mjs';
import { cleanups, get } from './processes.mjs';
import { linesSince, logOffset } from './log-lines.mjs';
import { createDisposableDatabase } from './pg-admin.mjs';
import {
  API_KEY_CHECKSUM_SECRET,
  API_KEY_PEPPER,
  DIST,
  METRICS_TOKEN,
  PEERS_DIST,
  PG_ADMIN_URL,
  REDIS_URL,
  ROOT,
  RUN_ID,
  SERVICE_IMAGE_ENV,
  distModule,
  log,
  SERVICE_NODE_FLAGS,
} from './settings.mjs';

export const SEED_PETS = 10_000;

// Seed: statuses interleaved along the ids (60% available, 35% pending, 5% sold, so the
// status=sold page is served by the (status, id) index), and every hundredth categoryId
// above 2^53, so exact int64 output is exercised on every page.
export const SEED_SQL = `
INSERT INTO "pets" ("name", "category_id", "status", "created_at", "updated_at")
SELECT 'Pet ' || i,
       CASE WHEN i % 100 = 0 THEN 9223372036854775807 - i ELSE 1 + i % 50 END,
       (CASE WHEN i % 100 < 60 THEN 'available' WHEN i % 100 < 95 THEN 'pending' ELSE 'sold' END)::"PetStatus",
       now(), now()
FROM generate_series(1, ${SEED_PETS}) AS i;
ANALYZE "pets";`;

export function tsc(args, outDir, what) {
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

export function build(withPeers) {
  const warnings = [];
  if (!(process.env.BENCH_SKIP_BUILD === '1' && existsSync(path.join(DIST, 'main.js')))) {
    log('building the service into .tmp/bench-dist');
    warnings.push(...tsc(['-p', 'tsconfig.build.json', '--outDir', DIST], path.join(DIST, 'main.js'), 'the service'));
  }
  if (withPeers && !(process.env.BENCH_SKIP_BUILD === '1' && existsSync(path.join(PEERS_DIST, 'bench/peers')))) {
    log('building the floor and peer apps into .tmp/bench-peers');
    warnings.push(
      ...tsc(['-p', 'bench/peers/tsconfig.build.json'], path.join(PEERS_DIST, 'bench/peers/peer.js'), 'the peers'),
    );
  }
  return warnings;
}

/**
 * The database openers of the built service, in whichever layout the build has (this
 * checkout's, or an older build's in .tmp/bench-dist): database/pg-database.js and
 * embedded-database.js (each loaded only when used, since open-database.js imports them on demand),
 * else database/database.js, else prisma/database.js.
 */
export async function databaseModule() {
  if (
    existsSync(path.join(DIST, 'database/pg-database.js')) &&
    !(await distModule('database/database.js')).openEmbedded
  ) {
    return { ...(await distModule('database/pg-database.js')), ...(await distModule('database/embedded-database.js')) };
  }
  return distModule(
    existsSync(path.join(DIST, 'database/database.js')) ? 'database/database.js' : 'prisma/database.js',
  );
}

/** The URL of a database on the bench's PostgreSQL server. */
export function databaseUrl(name) {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A fresh database, dropped at the end of the run. */
export function createDatabase(name = `animal_bench_${RUN_ID}`) {
  return createDisposableDatabase(PG_ADMIN_URL, name, cleanups, log);
}

/** Applies the service's migrations with its own migrate command. */
export async function migrate(databaseUrl) {
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
}

/** Runs SQL text (several statements allowed) on a database. */
export async function runSql(databaseUrl, sql) {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function migrateAndSeed(databaseUrl, extraSql = '') {
  await migrate(databaseUrl);
  await runSql(databaseUrl, SEED_SQL + extraSql);
}

/** Seeds a fresh embedded data directory through the service's own open-and-migrate path. */
export async function seedEmbedded(dataDir, extraSql = '') {
  const { loadConfig } = await distModule('config/config.js');
  const { openEmbedded } = await databaseModule();
  const config = loadConfig({
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
    METRICS_TOKEN,
    API_KEY_CHECKSUM_SECRET,
    API_KEY_PEPPER,
  });
  const db = await openEmbedded(
    config.database ?? config, // per-slice configuration, or the flat one of older versions
    () => {},
    'benchmark seeding',
  );
  try {
    await db.withRunner((sql) => sql.exec(SEED_SQL + extraSql));
  } finally {
    await db.close();
  }
}

/** Whether the service reads a variable: whether a file of src/config (its configuration slices) names it. */
export function configSupports(variable) {
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
export async function probeFeatures(server, key) {
  const anonymous = await get(`${server.url}/v1/pets?limit=1`);
  const keyed = await get(`${server.url}/v1/pets?limit=1`, { authorization: `Bearer ${key}` });
  const log0 = logOffset(server.logFile);
  for (let i = 0; i < 20; i++) await get(`${server.url}/v1/pets?limit=1`, { authorization: `Bearer ${key}` });
  await sleep(300); // an asynchronous logger may flush late
  return {
    auth: anonymous.status === 401,
    apiKey: key !== 'bench-no-key',
    rateLimits: keyed.headers.get('x-ratelimit-limit') !== null,
    rateLimitHeader: keyed.headers.get('x-ratelimit-limit'),
    requestLogging: linesSince(server.logFile, log0) >= 20,
    keyedStatus: keyed.status,
  };
}

export async function redisKeysUnder(prefix) {
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

/** Deletes every Redis key under `prefix`, in batches of a bounded number of arguments. */
export async function deleteRedisKeysUnder(prefix) {
  const { redis, keys } = await redisKeysUnder(prefix);
  try {
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  } finally {
    redis.disconnect();
  }
}

export async function redisVersion() {
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

/**
 * The service's environment, production's settings: behind one proxy (TRUST_PROXY=1, the load
 * generator in its place, sending X-Forwarded-For where a scenario has clients of their own).
 */
export function serviceEnvFor(db, port, prefix, prefixSupported) {
  return {
    NODE_ENV: 'production',
    METRICS_TOKEN, // production refuses an open /metrics
    API_KEY_CHECKSUM_SECRET,
    API_KEY_PEPPER,
    ...(configSupports('TRUST_PROXY') ? { TRUST_PROXY: '1' } : {}),
    DATABASE_URL: db.url,
    REDIS_URL,
    LOG_LEVEL: 'info',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}/v1`,
    STAGING_BASE_URL: `http://127.0.0.1:${port}/v1`,
    ...(prefixSupported ? { RATE_LIMIT_PREFIX: prefix } : {}),
    ...SERVICE_IMAGE_ENV,
  };
}

/**
 * How to start raw, the floor, the peer and the service on a database: script and environment.
 * Raw and the floor send the service's own statements (`petSql`, its PET_SQL), so they cannot
 * drift from it; raw's Link headers name the service's port, so both write the same text.
 */
export function serverSpecs({ db, petSql, ports, prefix, prefixSupported }) {
  const pool = { DATABASE_URL: db.url, DB_POOL_MAX: '10' };
  const sql = petSql ? { BENCH_PET_SQL: JSON.stringify(petSql) } : {};
  return {
    raw: [
      [path.join(ROOT, 'bench/baseline.mjs')],
      { ...pool, PUBLIC_BASE_URL: `http://127.0.0.1:${ports.service ?? ports.raw}/v1`, ...sql },
    ],
    floor: [[path.join(PEERS_DIST, 'bench/peers/floor.js')], { ...pool, NODE_ENV: 'production', ...sql }],
    peer: [[path.join(PEERS_DIST, 'bench/peers/peer.js')], { ...pool, NODE_ENV: 'production' }],
    service: [
      [...SERVICE_NODE_FLAGS, path.join(DIST, 'main.js')],
      serviceEnvFor(db, ports.service, prefix, prefixSupported),
    ],
  };
}

/**
 * Waits until no statement has run on a database for three checks in a row (at most `maxMs`),
 * so the backlog a run of slow queries leaves (requests still queued in a server's pool when
 * the load generator stops) does not fall into the next server's run. Returns the ms waited.
 */
export async function waitForIdle(dbName, maxMs = 60_000) {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  const t0 = Date.now();
  try {
    for (let quiet = 0; quiet < 3 && Date.now() - t0 < maxMs; await sleep(100)) {
      const { rows } = await c.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()",
        [dbName],
      );
      quiet = rows[0].n === 0 ? quiet + 1 : 0;
    }
    return Date.now() - t0;
  } finally {
    await c.end();
  }
}

/**
 * The fresh database, the keys, the Redis prefix: what every mode needs before a server starts.
 * The many keys are made when a scenario to run needs them.
 */
export async function prepare(warnings, scenarios) {
  const db = await createDatabase();
  const many = scenarios.some((s) => s.manyKeys) ? await manyKeys() : null;
  log(
    `database ${db.name} (PostgreSQL ${db.version}); migrating and seeding ${SEED_PETS} pets${many ? ` and ${MANY_KEYS} API keys` : ''}`,
  );
  await migrateAndSeed(db.url, many?.sql ?? '');
  const key = issueKey({ DATABASE_URL: db.url }) ?? 'bench-no-key';
  if (key === 'bench-no-key') warnings.push('the service has no API key tool yet: requests carry a dummy bearer token');
  const prefix = `bench:${RUN_ID}:`;
  const prefixSupported = configSupports('RATE_LIMIT_PREFIX');
  if (prefixSupported) {
    cleanups.push(() => deleteRedisKeysUnder(prefix));
  }
  return { db, key, many, prefix, prefixSupported };
}
