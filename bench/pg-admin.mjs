// Databases and key-tool output the bench scripts share; no side effects on import, so any
// script (run.mjs's modules, infra.mjs) can use them.
import { URL } from 'node:url';
import pg from 'pg';

/**
 * Creates database `name` through `adminUrl`; registers its DROP in `cleanups` (run at the end,
 * also on failure). Returns its URL and the server's version.
 */
export async function createDisposableDatabase(adminUrl, name, cleanups, log = () => {}) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const [{ server_version: version }] = (await admin.query('SHOW server_version')).rows;
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  cleanups.push(async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.end();
    log(`dropped database ${name}`);
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), version };
}

/** The key tool's arguments for the bench's key: enterprise, with limits no run reaches. */
export function unlimitedKeyArgs(name) {
  return [
    'create',
    '--name',
    name,
    '--plan',
    'enterprise',
    '--per-minute',
    '1000000000',
    '--per-day',
    '2000000000',
    '--json',
  ];
}

/** The key in the `--json` line the apikey tool prints last. */
export function keyFromToolOutput(out) {
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
