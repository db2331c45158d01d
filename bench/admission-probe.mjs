// Admission in production's shape, counted: many valid keys behind one address on a fresh
// instance, keyless traffic beside a valid key, and floods of forged keys, against the built
// service on PostgreSQL and Redis (behind one trusted proxy: X-Forwarded-For picks the address).
// Prints the outcomes of each scenario and the key lookups PostgreSQL served. It issues
// version 1 keys straight into api_keys (SHA-256, no pepper), so it runs against any build of
// the service, which is how the figures before and after a change are taken side by side.
//
// Usage: node bench/admission-probe.mjs [REPO_DIR]   (REPO_DIR: a built checkout; default: this one)
// Needs PostgreSQL at PGHOST_URL (default postgresql://postgres@127.0.0.1:5432) and Redis at
// REDIS_URL (default redis://127.0.0.1:6379).
/* global fetch, setTimeout */
import { spawn, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import pg from 'pg';

const REPO = path.resolve(process.argv[2] ?? '.');
const ADMIN = `${process.env.PGHOST_URL ?? 'postgresql://postgres@127.0.0.1:5432'}/postgres`;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DB = `admission_probe_${process.pid}`;
const DB_URL = ADMIN.replace(/\/postgres$/, `/${DB}`);

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function base62(value, width) {
  let out = '';
  for (let rest = value; rest > 0n; rest /= 62n) out = ALPHABET[Number(rest % 62n)] + out;
  return out.padStart(width, '0');
}
/** A version 1 key (ask_ + 43 + CRC32): what every build accepts. */
function keyV1() {
  const payload = `ask_${base62(BigInt(`0x${randomBytes(32).toString('hex')}`), 43)}`;
  return payload + base62(BigInt(crc32(payload)), 6);
}

async function insertKeys(client, count, plan = 'business') {
  const keys = Array.from({ length: count }, keyV1);
  for (let i = 0; i < keys.length; i += 500) {
    const chunk = keys.slice(i, i + 500);
    const values = chunk.map((_, j) => `($${3 * j + 1}, '${plan}', $${3 * j + 2}, $${3 * j + 3})`).join(', ');
    const params = chunk.flatMap((k) => ['probe', k.slice(0, 12), createHash('sha256').update(k).digest('hex')]);
    await client.query(`INSERT INTO api_keys (name, plan, prefix, hash) VALUES ${values}`, params);
  }
  return keys;
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function startService() {
  const port = await freePort();
  // Node's flags as `npm start` passes them.
  const child = spawn(process.execPath, ['--no-allocation-site-pretenuring', path.join(REPO, 'dist/main.js')], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: DB_URL,
      REDIS_URL,
      RATE_LIMIT_PREFIX: `probe:${process.pid}:${port}:`,
      TRUST_PROXY: '1',
      METRICS_TOKEN: randomBytes(16).toString('hex'),
      API_KEY_CHECKSUM_SECRET: randomBytes(32).toString('base64'),
      SHUTDOWN_DELAY_MS: '0',
      LOG_LEVEL: 'silent',
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if ((await fetch(`${url}/readyz`).catch(() => null))?.status === 200) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `${url}/v1/pets`, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) };
}

async function flood(url, inits, concurrency) {
  const counts = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < inits.length; i = next++) {
        const res = await fetch(url, inits[i]);
        const body = await res.json();
        const k = `${res.status} ${body.code ?? ''}`.trim();
        counts[k] = (counts[k] ?? 0) + 1;
      }
    }),
  );
  return counts;
}

const from = (address, key) => ({
  headers: { 'x-forwarded-for': address, ...(key ? { authorization: `Bearer ${key}` } : {}) },
});

async function keyScans(client) {
  // Backends flush their statistics when they exit: read after the service has stopped.
  await new Promise((r) => setTimeout(r, 700));
  const { rows } = await client.query(
    `SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = 'api_keys'`,
  );
  return Number(rows[0]?.n ?? 0);
}

async function scenario(title, client, run) {
  const service = await startService();
  const before = await keyScans(client);
  const counts = await run(service.url);
  await service.stop();
  const scans = (await keyScans(client)) - before;
  console.log(
    `${title}\n  ${Object.entries(counts)
      .map(([k, n]) => `${n} × ${k}`)
      .join(', ')}; api_keys scans: ${scans}`,
  );
}

const admin = new pg.Client({ connectionString: ADMIN });
await admin.connect();
await admin.query(`CREATE DATABASE "${DB}"`);
try {
  execFileSync(process.execPath, [path.join(REPO, 'dist/database/migrate.main.js')], {
    cwd: REPO,
    env: { PATH: process.env.PATH, DATABASE_URL: DB_URL, LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const client = new pg.Client({ connectionString: DB_URL });
  await client.connect();
  console.log(
    `admission probe of ${REPO} (Node ${process.version}, PostgreSQL and Redis, fresh instance per scenario)`,
  );
  const hundred = await insertKeys(client, 100);
  await scenario('100 business keys, one request each, one after the other, from one address:', client, (url) =>
    flood(
      url,
      hundred.map((k) => from('203.0.113.10', k)),
      1,
    ),
  );
  const [valid] = await insertKeys(client, 1);
  await scenario('70 keyless requests from an address, then a valid key it never sent:', client, async (url) => {
    const keyless = await flood(
      url,
      Array.from({ length: 70 }, () => from('203.0.113.20')),
      1,
    );
    const res = await fetch(url, from('203.0.113.20', valid));
    return { ...keyless, [`then the valid key: ${res.status} ${(await res.json()).code ?? ''}`.trim()]: 1 };
  });
  const many = await insertKeys(client, 2000);
  await scenario('2,000 business keys from one address, 64 connections:', client, (url) =>
    flood(
      url,
      many.map((k) => from('203.0.113.30', k)),
      64,
    ),
  );
  await scenario('2,000 forged version 1 keys from one address, 32 connections:', client, (url) =>
    flood(
      url,
      Array.from({ length: 2000 }, () => from('203.0.113.40', keyV1())),
      32,
    ),
  );
  await scenario('2,000 forged version 1 keys from 2,000 addresses, 32 connections:', client, (url) =>
    flood(
      url,
      Array.from({ length: 2000 }, (_, i) => from(`198.18.${i >> 8}.${i & 255}`, keyV1())),
      32,
    ),
  );
  await client.end();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS "${DB}" WITH (FORCE)`);
  await admin.end();
}
