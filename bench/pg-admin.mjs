// Databases and the bench's key, shared by the bench scripts; no side effects on import, so any
// script (run.mjs's modules, infra.mjs) can use them.
import { execFileSync } from 'node:child_process';
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

/**
 * Issues the bench's key, named `name`, with the built service's key tool `cli` (its
 * `cli/apikey.js`): enterprise, with limits no run reaches. `env` completes the tool's
 * environment (the database, the secrets). Returns the key.
 */
export function issueUnlimitedKey(cli, name, env) {
  const args = ['create', '--name', name, '--plan', 'enterprise', '--per-minute', '1000000000'];
  return keyToolJson(cli, [...args, '--per-day', '1000000000', '--json'], env, 'key');
}

/** Issues an admin token named `name` with the key tool `cli`, as docs/admin-api.md does. Returns the token. */
export function issueAdminToken(cli, name, env) {
  return keyToolJson(cli, ['admin', 'create', '--name', name, '--json'], env, 'token');
}

/** Runs the key tool and returns the field `field` of the JSON line it printed. */
function keyToolJson(cli, args, env, field) {
  const out = execFileSync(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
  });
  for (const line of out.trim().split('\n').reverse()) {
    try {
      const parsed = JSON.parse(line);
      if (typeof parsed[field] === 'string') return parsed[field];
    } catch {
      /* not the JSON line */
    }
  }
  throw new Error(`the apikey tool printed no ${field}:\n${out}`);
}
