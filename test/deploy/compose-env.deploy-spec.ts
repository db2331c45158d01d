import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { Compose, COMPOSE_FILE } from './compose.js';
import { configVariables, databaseVariables, envExampleVariables } from './config-variables.js';
import { installDebianPackages } from './podman.js';

/*
 * What docker-compose.yml hands the containers, as `docker-compose config` resolves it (no engine
 * needed): every variable the service's configuration reads reaches the instances, taken from .env
 * unless the stack's shape fixes it; the migrate job gets what the migrate command reads; .env is
 * optional; and .env.example marks the compose file's own variables.
 */

type Environment = Record<string, string>;
interface Resolved {
  services: Record<string, { environment?: Environment; command?: string[]; scale?: number }>;
}

/** What the stack fixes in the instances, whatever .env says (REDIS_PASSWORD goes into REDIS_URL). */
const FIXED_IN_INSTANCES: Environment = {
  NODE_ENV: 'production',
  PORT: '3000',
  HOST: '0.0.0.0',
  TRUST_PROXY: '1',
  DATABASE_URL: 'postgresql://animal_app:REPLACE-ME-app-db-password@pgbouncer:6432/animal_store?pgbouncer=true',
  DIRECT_URL: '',
  DATA_DIR: '/app/data',
  MIGRATIONS_DIR: 'prisma/migrations',
  REDIS_URL: 'redis://:from-env-REDIS_PASSWORD@redis:6379',
  REDIS_CLUSTER_NODES: '',
  REDIS_SENTINELS: '',
  REDIS_SENTINEL_NAME: '',
  REDIS_USERNAME: '',
  REDIS_PASSWORD: '',
  REDIS_SENTINEL_PASSWORD: '',
  METRICS_HOST: '0.0.0.0',
};

/** What the stack fixes in the migrate job: the pooled URL (for its role's timeout), PostgreSQL itself, the image's paths. */
const FIXED_IN_MIGRATE: Environment = {
  DATABASE_URL: FIXED_IN_INSTANCES.DATABASE_URL,
  DIRECT_URL: 'postgresql://animal:REPLACE-ME-postgres-password@postgres:5432/animal_store',
  DATA_DIR: '/app/data',
  MIGRATIONS_DIR: 'prisma/migrations',
};

const marker = (name: string): string => `from-env-${name}`;

describe('docker-compose.yml passes the service its settings', () => {
  let dir: string;

  beforeAll(async () => {
    await installDebianPackages(['docker-compose']);
    dir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-compose-'));
  }, 600_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The stack as docker-compose resolves it with `values` as the whole of .env. */
  async function resolve(values: Environment): Promise<Resolved> {
    const envFile = path.join(dir, 'env');
    writeFileSync(
      envFile,
      Object.entries(values)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
    );
    return yaml.load(await new Compose({ project: 'animal-store-config-check', envFile }).run(['config'])) as Resolved;
  }

  it('finds the variables of the service in src/config (the list this file checks against)', () => {
    const names = configVariables();
    expect(names).toEqual(
      expect.arrayContaining(['API_KEY_PEPPER', 'DATABASE_URL', 'LOG_LEVEL', 'METRICS_PORT', 'PORT']),
    );
    expect(names).toEqual(expect.arrayContaining(['RATE_LIMIT_MEMORY_MAX_BYTES', 'OTEL_BSP_SCHEDULE_DELAY']));
    expect(databaseVariables()).toEqual(
      expect.arrayContaining([
        'DATABASE_URL',
        'DIRECT_URL',
        'DB_POOL_MAX',
        'DB_STATEMENT_TIMEOUT_MS',
        'MIGRATIONS_DIR',
      ]),
    );
  });

  it('every variable the service reads reaches the instances: its value in .env, or the one the stack fixes', async () => {
    const names = configVariables();
    const resolved = await resolve(Object.fromEntries(names.map((n) => [n, marker(n)])));
    const expected = Object.fromEntries(
      names.map((n) => [n, n in FIXED_IN_INSTANCES ? FIXED_IN_INSTANCES[n] : marker(n)]),
    );
    const env = resolved.services.app.environment ?? {};
    const got = Object.fromEntries(names.map((n) => [n, env[n]]));
    expect(got).toEqual(expected);
  });

  it('the number of instances is one setting, APP_INSTANCES (2 without it)', async () => {
    expect((await resolve({})).services.app.scale).toBe(2);
    expect((await resolve({ APP_INSTANCES: '3' })).services.app.scale).toBe(3);
    // The one service every instance belongs to: no other service runs the image's server.
    const services = Object.keys((await resolve({})).services);
    expect(services.filter((n) => /^app\d*$/.test(n))).toEqual(['app']);
  });

  it('the migrate job gets every variable the migrate command reads', async () => {
    const names = databaseVariables();
    const resolved = await resolve(Object.fromEntries(names.map((n) => [n, marker(n)])));
    const env = resolved.services.migrate.environment ?? {};
    const got = Object.fromEntries(names.map((n) => [n, env[n]]));
    expect(got).toEqual(
      Object.fromEntries(names.map((n) => [n, n in FIXED_IN_MIGRATE ? FIXED_IN_MIGRATE[n] : marker(n)])),
    );
  });

  it('resolves without a .env: the defaults, and the placeholder secrets the instances refuse', async () => {
    const resolved = await resolve({});
    const env = resolved.services.app.environment ?? {};
    expect(env).toMatchObject({
      ...FIXED_IN_INSTANCES,
      REDIS_URL: 'redis://:REPLACE-ME-redis-password@redis:6379',
      API_KEY_PEPPER: expect.stringMatching(/^REPLACE-ME-/),
      API_KEY_CHECKSUM_SECRET: expect.stringMatching(/^REPLACE-ME-/),
      METRICS_PORT: '9464',
      SHUTDOWN_DELAY_MS: '5000',
      // The service's own default, repeated: an empty prefix would be taken as given.
      RATE_LIMIT_PREFIX: 'animal-store:rl:',
      LOG_LEVEL: 'info',
      CORS_ORIGINS: '',
    });
  });

  it(".env.example describes the eviction policy the stack's Redis runs with", async () => {
    const command = (await resolve({})).services.redis.command ?? [];
    const policy = command[command.indexOf('--maxmemory-policy') + 1];
    expect(policy).toBe('volatile-ttl');
    // The comment block above REDIS_MAXMEMORY in .env.example.
    const lines = readFileSync('.env.example', 'utf8').split('\n');
    const at = lines.findIndex((l) => /^#? ?REDIS_MAXMEMORY=/.test(l));
    let first = at;
    while (first > 0 && lines[first - 1].startsWith('#') && !lines[first - 1].includes('=')) first--;
    const comment = lines.slice(first, at).join(' ');
    expect(comment).toContain(policy);
    expect(comment).not.toMatch(/least recently used/i);
  });

  it('every variable the service reads is in .env.example', () => {
    const documented = new Set(envExampleVariables());
    expect(configVariables().filter((n) => !documented.has(n))).toEqual([]);
  });

  it(".env.example's docker-compose section lists exactly the compose file's own variables", () => {
    const yamlWithoutComments = readFileSync(COMPOSE_FILE, 'utf8').replace(/^\s*#.*$/gm, '');
    const interpolated = new Set([...yamlWithoutComments.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));
    const service = new Set(configVariables());
    const composeOwn = [...interpolated].filter((n) => !service.has(n)).sort();
    const section = envExampleVariables('# --- docker-compose only');
    // REDIS_PASSWORD is both: the service's (cluster, Sentinel) and the stack's Redis password.
    expect(section.filter((n) => n !== 'REDIS_PASSWORD')).toEqual(composeOwn);
    expect(section.filter((n) => !interpolated.has(n))).toEqual([]);
  });
});
