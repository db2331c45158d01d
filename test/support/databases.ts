import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig, AppConfig } from '../../src/config/config.js';
import { migratePostgres } from '../../src/prisma/database.js';

/**
 * The databases the HTTP tests run against: always the embedded default (a fresh DATA_DIR),
 * and PostgreSQL when DATABASE_URL is set (a fresh database on that server per suite,
 * migrated with the project's migrator and dropped afterwards).
 */
export interface TestDatabase {
  kind: 'embedded' | 'postgres';
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

export function databaseKinds(): ('embedded' | 'postgres')[] {
  return process.env.DATABASE_URL ? ['embedded', 'postgres'] : ['embedded'];
}

function adminUrl(): string {
  return process.env.DATABASE_URL as string;
}

export async function createTestDatabase(
  kind: 'embedded' | 'postgres',
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  if (kind === 'embedded') {
    const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-test-'));
    const env = { ...TEST_ENV, DATA_DIR: dir };
    return {
      kind,
      env,
      config: (extra = {}) => loadConfig({ ...env, ...extra }),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `animal_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  const env = { ...TEST_ENV, DATABASE_URL: url.toString() };
  if (options.migrate !== false) await migratePostgres(loadConfig(env), () => {});
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
