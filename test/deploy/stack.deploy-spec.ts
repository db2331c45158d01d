import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Answer, Load, send } from '../cluster/load.js';
import { freePort } from '../support/built-service.js';
import { waitFor } from '../support/wait-for.js';
import { Compose, COMPOSE_FILE, writeEnvFile } from './compose.js';
import { configVariables } from './config-variables.js';
import { DEBIAN_PACKAGES, installDebianPackages, PodmanEngine, startPodman, stopExecMonitors } from './podman.js';

const run = promisify(execFile);

/*
 * The deploy test (npm run test:deploy): the compose stack as shipped. The project's Dockerfile
 * and deploy/pgbouncer are built unchanged and docker-compose.yml is run unchanged by
 * docker-compose 1.29 against podman; a .env made from .env.example as docs/deployment.md says
 * (the two secrets set, ports of the test's choosing). No registry serves images here, so the
 * base images are look-alikes built from Debian (test/deploy/lookalikes), and an override the
 * test writes swaps only the image names of postgres, redis and haproxy for them.
 *
 * Then, through HAProxy's published port: the migrate job has completed, a key issued with the
 * key tool inside an instance creates and lists pets, and the day-two procedures of the docs
 * (rollout.sh, the rotations, a scale from 2 to 3 instances, backup and restore) run as written
 * while a bounded load runs, without a failed request. Everything the test started
 * is removed at the end: `docker-compose down -v`, the engine's API service (by PID), the scratch
 * directory, the monitors podman keeps for a while after each exec; the base images stay, so a
 * second run reuses them.
 */

const LOGS = path.resolve('.tmp/deploy-logs');
const LOOKALIKES = path.resolve('test/deploy/lookalikes');
/** The test's own image tags, so that a developer's animal-store-api:local is left alone. */
const IMAGE_TAG = 'deploy-test';
const NEXT_TAG = 'deploy-test-next';
/** The compose project: its containers, network and volumes are named after it. */
const project = `animal-store-deploy-${process.pid}`;

function print(what: string, figures: Record<string, unknown>): void {
  console.log(
    `[deploy] ${what}: ${Object.entries(figures)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ')}`,
  );
}

describe('the compose stack as shipped, on podman, through HAProxy', () => {
  let dir: string;
  let engine: PodmanEngine | undefined;
  let compose: Compose;
  let apiUrl: string;
  let statsUrl: string;
  let apiKey: string;
  let envFile: string;
  /** The compose options the deploy/ scripts take, as an operator passes them. */
  let composeOptions: string[];
  const timings: Record<string, string> = {};

  /** Runs `step`, recording how long it took (for the report line). */
  async function timed<T>(name: string, step: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    try {
      return await step();
    } finally {
      timings[name] = `${((Date.now() - t0) / 1000).toFixed(1)}s`;
    }
  }

  /** The containers of a compose service (the instances' several), sorted. */
  async function containersOf(service: string): Promise<string[]> {
    return (await compose.run(['ps', '-q', service])).split('\n').filter(Boolean).sort();
  }

  /** The container of a compose service of one container (its current one). */
  async function containerOf(service: string): Promise<string> {
    const [id] = await containersOf(service);
    if (!id) throw new Error(`no container for ${service}`);
    return id;
  }

  /** How many of HAProxy's servers of backend `app` are UP, from its Prometheus metrics. */
  async function serversUp(): Promise<number> {
    const lines = (await send(`${statsUrl}/metrics`)).body.split('\n');
    return lines.filter((l) => /^haproxy_server_status\{proxy="app",server="[^"]+",state="UP"\} 1$/.test(l)).length;
  }

  const untilServersUp = (count: number, timeoutMs = 120_000) =>
    waitFor(async () => (await serversUp()) === count, {
      what: `HAProxy to report ${count} instances UP`,
      timeoutMs,
      intervalMs: 500,
    });

  /** HAProxy's servers of backend `app` that have an address: status and sessions, by address. */
  async function servers(): Promise<Map<string, { status: string; sessions: number }>> {
    const [header, ...rows] = (await send(`${statsUrl}/stats;csv`)).body.split('\n').map((l) => l.split(','));
    const at = (name: string) => header.indexOf(name);
    return new Map(
      rows
        .filter((r) => r[0] === 'app' && r[at('addr')])
        .map((r) => [r[at('addr')].replace(/:\d+$/, ''), { status: r[at('status')], sessions: Number(r[at('stot')]) }]),
    );
  }

  const addressOf = async (container: string) =>
    (
      await engine!.podman([
        'inspect',
        '--format',
        '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}',
        container,
      ])
    ).trim();

  /**
   * `docker-compose exec -T --index N app …` in the lowest-numbered instance, as docs/deployment.md
   * says (after a rollout the numbers no longer start at 1, 1.29's default).
   */
  async function inInstance(args: string[], env: Record<string, string> = {}): Promise<string> {
    const numbers = await Promise.all(
      (await containersOf('app')).map(async (id) =>
        Number(
          (
            await engine!.podman([
              'inspect',
              '--format',
              '{{index .Config.Labels "com.docker.compose.container-number"}}',
              id,
            ])
          ).trim(),
        ),
      ),
    );
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    return compose.run(['exec', '-T', ...envArgs, '--index', String(Math.min(...numbers)), 'app', ...args]);
  }

  const bearer = (extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${apiKey}`, ...extra });

  beforeAll(async () => {
    await timed('packages', () => installDebianPackages(DEBIAN_PACKAGES));
    dir = mkdtempSync(path.join(os.tmpdir(), 'animal-store-deploy-'));
    engine = await startPodman(dir);
    const lookalikes = (images: string[]) =>
      run('sh', [path.join(LOOKALIKES, 'build.sh'), path.join(dir, 'images'), ...images], {
        env: { ...process.env, ...engine!.buildEnv },
        timeout: 900_000,
        maxBuffer: 64 * 1024 * 1024,
      });
    // The bases of the project's two Dockerfiles first; then those images, side by side with the
    // other look-alikes. The images the compose file builds come from the project's Dockerfiles
    // unchanged, tagged as `docker-compose build` tags them (built with podman itself: podman.ts).
    await timed('base images', () => lookalikes(['debian', 'node']));
    await timed('build', () =>
      Promise.all([
        engine!.build('.', `animal-store-api:${IMAGE_TAG}`),
        engine!.build('deploy/pgbouncer', 'animal-store-pgbouncer:1.18-bookworm'),
        lookalikes(['postgres', 'redis', 'haproxy']),
      ]),
    );

    // Only the image names of the three official images; everything else as shipped.
    const override = path.join(dir, 'docker-compose.lookalikes.yml');
    writeFileSync(
      override,
      [
        'services:',
        '  postgres:',
        '    image: localhost/animal-store-test/postgres:16',
        '  redis:',
        '    image: localhost/animal-store-test/redis:7',
        '  haproxy:',
        '    image: localhost/animal-store-test/haproxy:2.8',
        '',
      ].join('\n'),
    );
    const appPort = await freePort();
    const statsPort = await freePort();
    apiUrl = `http://127.0.0.1:${appPort}`;
    statsUrl = `http://127.0.0.1:${statsPort}`;
    // .env as docs/deployment.md says: a copy of .env.example with the two secrets set.
    envFile = path.join(dir, '.env');
    writeEnvFile(envFile, {
      API_KEY_PEPPER: randomBytes(36).toString('base64url'),
      API_KEY_CHECKSUM_SECRET: randomBytes(36).toString('base64url'),
      REDIS_PASSWORD: randomBytes(18).toString('hex'),
      POSTGRES_PASSWORD: randomBytes(18).toString('hex'),
      APP_DB_PASSWORD: randomBytes(18).toString('hex'),
      // The admin API on each instance's loopback, reached with deploy/admin-api.sh.
      ADMIN_PORT: '9100',
      APP_PORT: String(appPort),
      HAPROXY_STATS_PORT: String(statsPort),
      PUBLIC_BASE_URL: `${apiUrl}/v1`,
      IMAGE_TAG,
      // Faster checks and drains than the defaults, keeping the rule deployment.md states
      // (SHUTDOWN_DELAY_MS above INTER + FASTINTER with room): each instance's turn is shorter.
      HAPROXY_CHECK_INTER: '1s',
      HAPROXY_CHECK_FASTINTER: '500ms',
      SHUTDOWN_DELAY_MS: '3000',
    });
    composeOptions = ['-p', project, '--env-file', envFile, '-f', COMPOSE_FILE, '-f', override];
    compose = new Compose({
      project,
      envFile,
      overrideFile: override,
      engineEnv: engine.env,
    });
    await timed('up', () => compose.run(['up', '-d'], { timeoutMs: 300_000 }));
    await timed('ready', () => untilServersUp(2));
  }, 1_800_000);

  afterAll(async () => {
    if (compose) {
      mkdirSync(LOGS, { recursive: true });
      const logs = await compose
        .run(['logs', '--no-color', '--timestamps'], { timeoutMs: 60_000 })
        .catch((e: Error) => e.message);
      writeFileSync(path.join(LOGS, 'compose.log'), logs);
      await timed('down', () => compose.run(['down', '-v', '--remove-orphans'], { timeoutMs: 180_000 }));
      stopExecMonitors(`${project}_`);
      await engine?.podman(['rmi', `localhost/animal-store-api:${NEXT_TAG}`]).catch(() => '');
    }
    await engine?.stop();
    if (engine) writeFileSync(path.join(LOGS, 'podman-service.log'), engine.output());
    if (dir) rmSync(dir, { recursive: true, force: true });
    print('timings', timings);
  }, 300_000);

  it('the migrate job ran once, applied every migration and exited 0', async () => {
    const id = await containerOf('migrate');
    const state = (await engine!.podman(['inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', id])).trim();
    expect(state).toBe('exited 0');
    const log = await compose.run(['logs', '--no-color', 'migrate']);
    expect(log).toMatch(/applied \d+ migration\(s\)/);
    expect(log).toContain('through a pooler');
  });

  it('every variable the service reads is set in the running instances', async () => {
    const instances = await containersOf('app');
    expect(instances).toHaveLength(2);
    for (const container of instances) {
      const env = (
        await engine!.podman(['inspect', '--format', '{{range .Config.Env}}{{println .}}{{end}}', container])
      )
        .split('\n')
        .map((l) => l.slice(0, l.indexOf('=')));
      expect({ container, missing: configVariables().filter((n) => !env.includes(n)) }).toEqual({
        container,
        missing: [],
      });
    }
  });

  it('a key issued with the key tool in the app container creates and lists pets through HAProxy', async () => {
    // docs/deployment.md, "Compose stack": the key tool runs in a replica's container.
    const out = await inInstance([
      'node',
      'dist/cli/apikey.js',
      'create',
      '--name',
      'deploy-test',
      '--plan',
      'enterprise',
      '--per-minute',
      '100000',
      '--per-day',
      '1000000',
      '--json',
    ]);
    const issued = JSON.parse(out.trim().split('\n').pop()!) as { key: string; plan: string };
    expect(issued.plan).toBe('enterprise');
    apiKey = issued.key;
    expect(apiKey).toMatch(/^ask2_/);

    const created: Answer = await send(`${apiUrl}/v1/pets`, {
      method: 'POST',
      headers: bearer({ 'Content-Type': 'application/json' }),
      body: JSON.stringify({ name: 'Rex through the stack', categoryId: 7 }),
    });
    expect({ status: created.status, type: created.headers['content-type'] }).toEqual({
      status: 201,
      type: expect.stringMatching(/^application\/json/),
    });
    const pet = JSON.parse(created.body) as { id: number; name: string; status: string; categoryId: number };
    expect(pet).toMatchObject({ name: 'Rex through the stack', status: 'available', categoryId: 7 });
    expect(created.headers.location).toBe(`${apiUrl}/v1/pets/${pet.id}`);
    expect(created.headers['x-ratelimit-limit']).toBeDefined();

    const listed = await send(`${apiUrl}/v1/pets?limit=100`, { headers: bearer() });
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body)).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: pet.id, name: pet.name })]),
    );

    const anonymous = await send(`${apiUrl}/v1/pets`);
    expect({ status: anonymous.status, body: JSON.parse(anonymous.body) as unknown }).toEqual({
      status: 401,
      body: expect.objectContaining({ code: 'missing_api_key', status: 401 }),
    });
  });

  /** Runs deploy/<name> as an operator does, with the stack's compose options; its output. */
  async function script(name: string, args: string[], env: Record<string, string> = {}): Promise<string> {
    try {
      const { stdout, stderr } = await run('sh', [path.join('deploy', name), ...args, ...composeOptions], {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/root',
          ...engine!.env,
          COMPOSE: 'docker-compose',
          ENGINE: 'podman',
          ...env,
        },
        timeout: 600_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout + stderr;
    } catch (err) {
      const e = err as Error & { stdout?: string; stderr?: string; code?: number };
      throw new Error(`deploy/${name} ${args.join(' ')} exited ${e.code}:\n${(e.stdout ?? '') + (e.stderr ?? '')}`, {
        cause: err,
      });
    }
  }

  /** Sets `name=value` in the stack's .env, as a person edits it. */
  function setEnv(name: string, value: string): void {
    const lines = readFileSync(envFile, 'utf8').split('\n');
    const at = lines.findIndex((l) => new RegExp(`^(# )?${name}=`).test(l));
    if (at === -1) lines.push(`${name}=${value}`);
    else lines[at] = `${name}=${value}`;
    writeFileSync(envFile, lines.join('\n'));
  }

  const envOf = async (container: string): Promise<string[]> =>
    (await engine!.podman(['inspect', '--format', '{{range .Config.Env}}{{println .}}{{end}}', container]))
      .split('\n')
      .filter(Boolean);

  /** psql as the database's owner inside the postgres container: the first column of each row. */
  async function sql(query: string): Promise<string> {
    return (
      await compose.run([
        'exec',
        '-T',
        'postgres',
        'sh',
        '-c',
        'psql -XAtq -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" -c "$0"',
        query,
      ])
    ).trim();
  }

  const SERVICES = ['postgres', 'redis', 'pgbouncer', 'haproxy'];
  /** The containers of the stack's services; `app`: the instances', sorted. */
  const containers = async (): Promise<Record<string, string>> =>
    Object.fromEntries([
      ...(await Promise.all(SERVICES.map(async (s) => [s, await containerOf(s)] as const))),
      ['app', (await containersOf('app')).join(' ')],
    ]);

  /** The services a run of rollout.sh found changed, in order of name. */
  const changed = (output: string) => /rollout: changed:([^(]*)/.exec(output)![1].trim().split(' ').sort();

  it('deploy/rollout.sh applies a setting, then a new image, and rotates the Redis password, one instance at a time under load: 0 failed', async () => {
    expect(apiKey).toBeDefined();
    const traffic = new Load({
      url: apiUrl,
      apiKey,
      namePrefix: 'deploy-day2',
      concurrency: 6,
      ratePerSecond: 60,
      maxOperations: 40_000,
      maxDurationMs: 600_000,
      createRetryBudgetMs: 10_000,
    });
    const before = await containers();
    const oldRedisPassword = readFileSync(envFile, 'utf8').match(/^REDIS_PASSWORD=(.*)$/m)![1];
    traffic.start();
    let settings: string, image: string, rotation: string;
    try {
      await traffic.progress(100);
      // A setting edited in .env, applied by the one documented command.
      setEnv('CORS_ORIGINS', 'https://shop.example');
      settings = await timed('rollout: a setting', () => script('rollout.sh', []));
      await traffic.progress(50);
      // The next release under a tag of its own (the same build: what rolls is the image the
      // instances run, recorded in .env by the script); migrations first.
      await engine!.podman([
        'tag',
        `localhost/animal-store-api:${IMAGE_TAG}`,
        `localhost/animal-store-api:${NEXT_TAG}`,
      ]);
      image = await timed('rollout: an image', () => script('rollout.sh', ['--tag', NEXT_TAG]));
      await traffic.progress(50);
      rotation = await timed('rotate: Redis password', () => script('rotate-redis-password.sh', []));
      await traffic.progress(100);
    } finally {
      await traffic.stop();
    }
    const f = traffic.figures;
    print('day two under load', {
      sent: f.sent,
      failed: f.failed,
      operations: f.operations,
      slowestMs: f.slowestMs,
    });
    if (f.samples.length > 0) console.log(`[deploy]   failures: ${f.samples.join(' | ')}`);
    expect({ failed: f.failed, operationsFailed: f.operationsFailed }).toEqual({ failed: 0, operationsFailed: 0 });

    expect(changed(settings)).toEqual(['app']);
    expect(changed(image)).toEqual(['app', 'migrate']);
    expect(image).toContain('database is up to date');
    expect(changed(rotation)).toEqual(['app', 'redis']);
    const after = await containers();
    for (const s of ['postgres', 'pgbouncer', 'haproxy']) expect({ s, id: after[s] }).toEqual({ s, id: before[s] });
    expect({ redisReplaced: after.redis !== before.redis }).toEqual({ redisReplaced: true });
    // Every instance replaced, and as many as before.
    const [oldInstances, newInstances] = [before.app.split(' '), after.app.split(' ')];
    expect(newInstances).toHaveLength(2);
    expect(newInstances.filter((id) => oldInstances.includes(id))).toEqual([]);
    for (const id of newInstances) {
      expect(await envOf(id)).toContain('CORS_ORIGINS=https://shop.example');
      const imageName = (await engine!.podman(['inspect', '--format', '{{.ImageName}}', id])).trim();
      expect(imageName).toContain(`animal-store-api:${NEXT_TAG}`);
    }
    // The version is where the next command, from any shell, finds it.
    expect(readFileSync(envFile, 'utf8')).toMatch(new RegExp(`^IMAGE_TAG=${NEXT_TAG}$`, 'm'));
    const newRedisPassword = readFileSync(envFile, 'utf8').match(/^REDIS_PASSWORD=(.*)$/m)![1];
    expect(newRedisPassword).toMatch(/^[0-9a-f]{48}$/);
    const auth = (password: string) =>
      compose.run(['exec', '-T', '-e', `REDISCLI_AUTH=${password}`, 'redis', 'redis-cli', 'ping']).then(
        (o) => o.trim(),
        (e: Error) => e.message,
      );
    expect(await auth(newRedisPassword)).toBe('PONG');
    expect(await auth(oldRedisPassword)).toMatch(/WRONGPASS|NOAUTH|invalid/i);

    // The plain command, as anyone runs it next: nothing rolls back, nothing restarts.
    await timed('up -d again', () => compose.run(['up', '-d'], { timeoutMs: 300_000 }));
    expect(await containers()).toEqual(after);
    expect(await script('rollout.sh', [])).toContain('changed: nothing');
  }, 900_000);

  it('deploy/rotate-db-password.sh twice and a scale from 2 to 3 instances and back, under load: 0 failed, PostgreSQL and PgBouncer never restarted', async () => {
    const before = await containers();
    const env = () => readFileSync(envFile, 'utf8');
    const firstPassword = env().match(/^APP_DB_PASSWORD=(.*)$/m)![1];
    const traffic = new Load({
      url: apiUrl,
      apiKey,
      namePrefix: 'deploy-dbpw',
      concurrency: 6,
      ratePerSecond: 60,
      maxOperations: 40_000,
      maxDurationMs: 600_000,
      createRetryBudgetMs: 10_000,
    });
    traffic.start();
    const t0 = Date.now();
    let first: string, scaleUp: string, second: string, scaleDown: string;
    let secondPassword: string;
    let third: { address: string; sessionsAdded: number; upAfterScale: number };
    try {
      await traffic.progress(50);
      // docs/operations.md, "Rotating secrets": the instances move to the twin login role.
      first = await timed('rotate: database password', () => script('rotate-db-password.sh', []));
      secondPassword = env().match(/^APP_DB_PASSWORD=(.*)$/m)![1];
      await traffic.progress(50);
      // docs/deployment.md, "More instances": one setting, the one command.
      const instancesBefore = await containersOf('app');
      setEnv('APP_INSTANCES', '3');
      scaleUp = await timed('scale: 2 to 3', () => script('rollout.sh', []));
      const added = (await containersOf('app')).filter((id) => !instancesBefore.includes(id));
      expect(added).toHaveLength(1);
      const address = await addressOf(added[0]);
      const upAfterScale = await serversUp();
      const sessionsBefore = (await servers()).get(address)?.sessions ?? 0;
      await traffic.progress(60);
      third = {
        address,
        upAfterScale,
        sessionsAdded: ((await servers()).get(address)?.sessions ?? 0) - sessionsBefore,
      };
      // Back to the first login role, with three instances to replace.
      second = await timed('rotate: database password, 3 instances', () => script('rotate-db-password.sh', []));
      await traffic.progress(50);
      setEnv('APP_INSTANCES', '2');
      scaleDown = await timed('scale: 3 to 2', () => script('rollout.sh', []));
      await traffic.progress(50);
    } finally {
      await traffic.stop();
    }
    const f = traffic.figures;
    print('database password rotations and scaling under load', {
      sent: f.sent,
      failed: f.failed,
      seconds: (Date.now() - t0) / 1000,
      slowestMs: f.slowestMs,
    });
    if (f.samples.length > 0) console.log(`[deploy]   failures: ${f.samples.join(' | ')}`);
    expect({ failed: f.failed, operationsFailed: f.operationsFailed }).toEqual({ failed: 0, operationsFailed: 0 });

    expect(first).toContain('the role has the new password');
    expect(first).toContain('animal_app retired');
    expect(changed(first)).toEqual(['app', 'migrate']);
    expect(second).toContain('animal_app_b retired');
    expect(changed(scaleUp)).toEqual(['app']);
    expect(changed(scaleDown)).toEqual(['app']);
    // The third instance was UP at HAProxy and served requests.
    expect({ up: third.upAfterScale, served: third.sessionsAdded > 0 }).toEqual({ up: 3, served: true });
    expect(await serversUp()).toBe(2);
    expect(await containersOf('app')).toHaveLength(2);
    const after = await containers();
    for (const s of ['postgres', 'pgbouncer', 'haproxy', 'redis'])
      expect({ s, id: after[s] }).toEqual({ s, id: before[s] });

    // The instances log in as the role .env names, with its password; the retired role's password is gone.
    expect(env()).toMatch(/^APP_DB_LOGIN_SUFFIX=$/m);
    const password = env().match(/^APP_DB_PASSWORD=(.*)$/m)![1];
    expect(password).toMatch(/^[0-9a-f]{48}$/);
    expect(new Set([firstPassword, secondPassword, password]).size).toBe(3);
    for (const id of after.app.split(' '))
      expect(await envOf(id)).toContain(
        `DATABASE_URL=postgresql://animal_app:${password}@pgbouncer:6432/animal_store?pgbouncer=true`,
      );
    const login = (user: string, pw: string) =>
      compose
        .run([
          'exec',
          '-T',
          '-e',
          `PGPASSWORD=${pw}`,
          'pgbouncer',
          'psql',
          '-XAtq',
          '-h',
          '127.0.0.1',
          '-p',
          '6432',
          '-U',
          user,
          '-d',
          'animal_store',
          '-c',
          'SELECT 1',
        ])
        .then(
          (o) => o.trim(),
          (e: Error) => e.message,
        );
    expect(await login('animal_app', password)).toBe('1');
    expect(await login('animal_app', firstPassword)).toMatch(/authentication failed|no such user/);
    expect(await login('animal_app_b', secondPassword)).toMatch(/authentication failed|no such user/);
    // The twin has the API role's privileges through membership and nothing more: rows of the
    // tables, the audit log only to read (appends go through append_audit_entry()).
    expect(
      await sql(
        `SELECT concat_ws(' ', pg_has_role('animal_app_b', 'animal_app', 'USAGE'), rolsuper, rolcreaterole, rolcreatedb,
           has_table_privilege('animal_app_b', 'pets', 'INSERT'), has_table_privilege('animal_app_b', 'audit_log', 'SELECT'),
           has_table_privilege('animal_app_b', 'audit_log', 'INSERT'), has_table_privilege('animal_app_b', 'audit_log', 'UPDATE'),
           has_table_privilege('animal_app_b', 'audit_log', 'DELETE'), has_table_privilege('animal_app_b', 'audit_log', 'TRUNCATE'),
           has_schema_privilege('animal_app_b', 'public', 'CREATE'))
         FROM pg_roles WHERE rolname = 'animal_app_b'`,
      ),
    ).toBe('t f f f t t f f f f f');
    // Served again through the balancer, and nothing left for the next command.
    const listed = await send(`${apiUrl}/v1/pets?limit=5`, { headers: bearer() });
    expect(listed.status).toBe(200);
    expect(await script('rollout.sh', [])).toContain('changed: nothing');
  }, 900_000);

  it('refuses the public placeholder passwords in production, naming the variable', async () => {
    const placeholder = 'postgresql://animal_app:REPLACE-ME-app-db-password@pgbouncer:6432/animal_store?pgbouncer=true';
    const refused = await compose.run(['run', '--rm', '-e', `DATABASE_URL=${placeholder}`, 'migrate']).then(
      () => 'exited 0',
      (e: Error) => e.message,
    );
    expect(refused).toMatch(/\(78\)/);
    expect(refused).toMatch(/DATABASE_URL holds a public placeholder password.*set APP_DB_PASSWORD in \.env/);
    // The service's message names the variable, never the password (the command line above it does).
    expect(refused.split('\n').find((l) => l.startsWith('configuration error'))).not.toContain('REPLACE-ME-app-db');
  });

  it('the key tool records the person APIKEY_ACTOR names, and deploy/admin-api.sh reaches the admin API', async () => {
    const out = await inInstance(['node', 'dist/cli/apikey.js', 'admin', 'create', '--name', 'deploy-ops', '--json'], {
      APIKEY_ACTOR: 'alice',
    });
    const { token } = JSON.parse(out.trim().split('\n').pop()!) as { token: string };
    const audit = JSON.parse(
      await script('admin-api.sh', ['GET', '/audit?limit=100'], { ADMIN_TOKEN: token }),
    ) as unknown;
    expect(JSON.stringify(audit)).toMatch(
      /"actor":"cli:alice"[^}]*"action":"admin_token.created"|"action":"admin_token.created"[^}]*"actor":"cli:alice"/,
    );
    const refused = await script('admin-api.sh', ['GET', '/keys'], { ADMIN_TOKEN: 'asadm_not-a-token' }).then(
      () => 'exited 0',
      (e: Error) => e.message,
    );
    expect(refused).toMatch(/exited 1/);
    expect(refused).toMatch(/"code":"[a-z_]+".*"status":401/);
  });

  it('a full outage, and a backup restored after the database is destroyed: the same animals, keys, audit chain and usage', async () => {
    const verify = async () =>
      JSON.parse(
        (await inInstance(['node', 'dist/cli/apikey.js', 'audit', 'verify', '--json'])).trim().split('\n').pop()!,
      ) as { ok: boolean; entries: number; head: { id: string; hash: string } };
    const chain = await verify();
    expect(chain).toMatchObject({ ok: true, entries: expect.any(Number) });
    expect(chain.entries).toBeGreaterThan(0);
    // Quiet first, so that what is compared is what the backup holds (each instance writes its usage as it stops).
    await compose.run(['stop', 'app'], { timeoutMs: 120_000 });
    await waitFor(async () => (await serversUp()) === 0, {
      what: 'HAProxy to see both instances down',
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    // The outage, as a client sees it: the balancer's own answer, the service's Error shape.
    const down = await send(`${apiUrl}/v1/pets`, { headers: bearer({ 'X-Request-Id': 'outage-check-1' }) });
    expect({ status: down.status, body: JSON.parse(down.body) as unknown, retry: down.headers['retry-after'] }).toEqual(
      {
        status: 503,
        body: { code: 'service_unavailable', message: expect.any(String), status: 503, requestId: 'outage-check-1' },
        retry: '5',
      },
    );
    const digest = () =>
      sql(
        ['pets', 'api_keys', 'admin_tokens', 'audit_log', 'key_usage']
          .map(
            (t) => `SELECT '${t}', count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM ${t} x`,
          )
          .join(' UNION ALL '),
      );
    const before = await digest();
    expect(before).toMatch(/^pets\|[1-9]/m);
    expect(before).toMatch(/^key_usage\|[1-9]/m);
    const file = path.join(dir, 'backups', 'drill.dump');
    expect(await timed('backup', () => script('backup.sh', [file]))).toMatch(/backup: .*drill\.dump \(\d+ bytes\)/);
    // Destroyed: the database is gone.
    await compose.run(['exec', '-T', 'postgres', 'sh', '-c', 'dropdb --force -U "$POSTGRES_USER" "$POSTGRES_DB"']);
    await expect(sql('SELECT 1')).rejects.toThrow(/does not exist/);
    expect(await timed('restore', () => script('restore.sh', [file]))).toMatch(/restore: done, serving/);
    // Compared before any request: a request records its key's last use, which changes api_keys.
    expect(await digest()).toBe(before);
    // restore.sh returns once the instances are back in rotation: the same key serves the same
    // animals through the balancer at once.
    const listed = await send(`${apiUrl}/v1/pets?limit=5`, { headers: bearer() });
    expect(listed.status).toBe(200);
    expect((JSON.parse(listed.body) as unknown[]).length).toBeGreaterThan(0);
    const verified = await inInstance(['node', 'dist/cli/apikey.js', 'audit', 'verify', '--json']);
    expect(JSON.parse(verified.trim().split('\n').pop()!)).toMatchObject({ ok: true });
  }, 600_000);
});
