import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { loadConfig, AppConfig } from '../../src/config/config.js';
import { openEmbedded } from '../../src/database/embedded-database.js';
import { migratePostgres } from '../../src/database/pg-database.js';
import { describeIf } from './describe-if.js';
import { scratchDir } from './scratch.js';

/**
 * The databases the HTTP tests run against: always the embedded default (a fresh DATA_DIR),
 * and PostgreSQL when DATABASE_URL is set (a fresh database on that server per suite, a copy
 * of one migrated by the project's migrator, dropped afterwards). Both come migrated unless
 * `migrate: false` asks for an empty one (an empty DATA_DIR: PGlite initialises it and the
 * service migrates it when it opens it, as on a first start).
 */
export interface TestDatabase {
  kind: DatabaseKind;
  /** Environment for loadConfig / a child process. */
  env: Record<string, string>;
  config(extra?: Record<string, string>): AppConfig;
  /** Runs SQL directly against the database (only while no app holds an embedded one). */
  drop(): Promise<void>;
}

export const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  PUBLIC_BASE_URL: 'https://api.example.test/v1',
  STAGING_BASE_URL: 'https://staging.example.test/v1',
};

export type DatabaseKind = 'embedded' | 'postgres';

/**
 * The databases of describeEachDatabase: the embedded one, and PostgreSQL when DATABASE_URL is
 * set. TEST_DATABASES=postgres leaves the embedded one out (CI's run on Node 24, the production
 * runtime, which in production always has PostgreSQL; the run on the machine's Node covers both).
 */
export function databaseKinds(): DatabaseKind[] {
  if (!process.env.DATABASE_URL) return ['embedded'];
  return process.env.TEST_DATABASES === 'postgres' ? ['postgres'] : ['embedded', 'postgres'];
}

/** PostgreSQL when DATABASE_URL is set (CI), else the embedded database: for suites that run on one. */
export function preferredDatabaseKind(): DatabaseKind {
  return process.env.DATABASE_URL ? 'postgres' : 'embedded';
}

/** The suite once per database kind there is (`title` names it with %s). */
export function describeEachDatabase(title: string, suite: (kind: DatabaseKind) => void): void {
  describe.each(databaseKinds().map((k) => [k] as const))(title, suite);
}

/** Suites that need PostgreSQL: skipped with a notice when DATABASE_URL is unset. */
export function describeIfPostgres(title: string, suite: () => void): void {
  describeIf(
    Boolean(process.env.DATABASE_URL),
    'DATABASE_URL is unset: the PostgreSQL-only suites do not run (e.g. DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres)',
  )(title, suite);
}

function adminUrl(): string {
  return process.env.DATABASE_URL as string;
}

export async function createTestDatabase(
  kind: DatabaseKind,
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  if (kind === 'embedded') {
    const dir = scratchDir('animal-store-test');
    if (options.migrate !== false) cpSync(await migratedDataDir(), dir, { recursive: true });
    const env = { ...TEST_ENV, DATA_DIR: dir };
    return {
      kind,
      env,
      config: (extra = {}) => loadConfig({ ...env, ...extra }),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `animal_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const template = options.migrate === false ? 'template1' : await migratedTemplateDatabase();
  await createDatabase(name, template);
  const env = { ...TEST_ENV, DATABASE_URL: databaseUrl(name) };
  return {
    kind,
    env,
    config: (extra = {}) => loadConfig({ ...env, ...extra }),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** CREATE DATABASE name TEMPLATE template, retried while another session briefly holds the template. */
async function createDatabase(name: string, template: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        return;
      } catch (err) {
        // 55006: "source database is being accessed by other users" (a concurrent copy of it).
        if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    await admin.end();
  }
}

/** A digest of the migrations (and of `extra`): what a template made from them depends on. */
function migrationsDigest(extra: string): string {
  const migrationsDir = loadConfig(TEST_ENV).database.migrationsDir;
  const hash = createHash('sha256').update(extra);
  for (const name of readdirSync(migrationsDir).sort()) {
    const file = path.join(migrationsDir, name, 'migration.sql');
    if (existsSync(file)) hash.update(`${name}\n`).update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * A migrated PostgreSQL database to copy with CREATE DATABASE … TEMPLATE: a file copy on the
 * server instead of running every migration per suite. Named by the migrations' digest, so a
 * change of migrations makes a new one; built under a name of its own and renamed into place
 * only once migrated, so a copy never starts from a half-migrated template. Jest processes
 * side by side (workers, CI's two runs) may each build one: the first rename wins.
 */
async function migratedTemplateDatabase(): Promise<string> {
  const name = `animal_test_template_${migrationsDigest('postgres')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount) return name;
    const building = `${name}_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS "${building}"`);
    await admin.query(`CREATE DATABASE "${building}"`);
    await migratePostgres(loadConfig({ ...TEST_ENV, DATABASE_URL: databaseUrl(building) }).database, () => {});
    try {
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    } catch (err) {
      // 42P04: another process renamed its template into place first.
      if ((err as { code?: string }).code !== '42P04') throw err;
      await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
    }
    return name;
  } finally {
    await admin.end();
  }
}

/**
 * A migrated embedded DATA_DIR to copy: initialising a PGlite directory (its initdb) and
 * migrating it takes seconds of CPU, copying one a fraction of that. Made once per
 * PGlite version and set of migrations in .tmp, by the project's own openEmbedded (exactly what
 * a first start leaves before the app runs), and closed cleanly before anything copies it.
 * Suites that need a first start on an empty DATA_DIR ask for `migrate: false`. Jest processes
 * side by side may each build one: the first to rename it into place wins.
 */
async function migratedDataDir(): Promise<string> {
  const pgliteVersion = (
    JSON.parse(readFileSync('node_modules/@electric-sql/pglite/package.json', 'utf8')) as { version: string }
  ).version;
  const dir = path.resolve('.tmp', `pglite-template-${migrationsDigest(pgliteVersion)}`);
  if (existsSync(dir)) return dir;
  const building = `${dir}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  const database = await openEmbedded(
    loadConfig({ ...TEST_ENV, DATA_DIR: building }).database,
    () => {},
    'test template',
  );
  await database.close();
  try {
    renameSync(building, dir);
  } catch (err) {
    if (!existsSync(dir)) throw err;
    rmSync(building, { recursive: true, force: true }); // another process made it first
  }
  return dir;
}
