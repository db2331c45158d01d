import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Answer, Load, send } from '../cluster/load.js';
import { freePort } from '../support/built-service.js';
import { sample } from '../support/metrics-text.js';
import { waitFor } from '../support/wait-for.js';
import { Compose, writeEnvFile } from './compose.js';
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
 * key tool inside app1 creates and lists pets, and app1 is replaced as "Rolling deploys behind
 * HAProxy" says while a bounded load runs, without a failed request. Everything the test started
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

  /** The container of a compose service (its current one). */
  async function containerOf(service: string): Promise<string> {
    const id = (await compose.run(['ps', '-q', service])).trim().split('\n')[0];
    if (!id) throw new Error(`no container for ${service}`);
    return id;
  }

  /** HAProxy's view of one server: UP (1) or not (0), from its Prometheus metrics. */
  async function serverUp(server: string): Promise<boolean> {
    const text = (await send(statsUrl)).body;
    return sample(text, 'haproxy_server_status', { proxy: 'app', server, state: 'UP' }) === 1;
  }

  const untilUp = (server: string, timeoutMs = 120_000) =>
    waitFor(() => serverUp(server), { what: `HAProxy to report ${server} UP`, timeoutMs, intervalMs: 500 });

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
        engine!.build('deploy/pgbouncer', `animal-store-pgbouncer:${IMAGE_TAG}`),
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
    statsUrl = `http://127.0.0.1:${statsPort}/metrics`;
    // .env as docs/deployment.md says: a copy of .env.example with the two secrets set.
    const envFile = path.join(dir, '.env');
    writeEnvFile(envFile, {
      API_KEY_PEPPER: randomBytes(36).toString('base64url'),
      API_KEY_CHECKSUM_SECRET: randomBytes(36).toString('base64url'),
      REDIS_PASSWORD: randomBytes(18).toString('hex'),
      APP_PORT: String(appPort),
      HAPROXY_STATS_PORT: String(statsPort),
      PUBLIC_BASE_URL: `${apiUrl}/v1`,
      IMAGE_TAG,
    });
    compose = new Compose({
      project,
      envFile,
      overrideFile: override,
      engineEnv: engine.env,
    });
    await timed('up', () => compose.run(['up', '-d'], { timeoutMs: 300_000 }));
    await timed('ready', async () => {
      await untilUp('app1');
      await untilUp('app2');
    });
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
    for (const service of ['app1', 'app2']) {
      const env = (
        await engine!.podman([
          'inspect',
          '--format',
          '{{range .Config.Env}}{{println .}}{{end}}',
          await containerOf(service),
        ])
      )
        .split('\n')
        .map((l) => l.slice(0, l.indexOf('=')));
      expect({ service, missing: configVariables().filter((n) => !env.includes(n)) }).toEqual({ service, missing: [] });
    }
  });

  it('a key issued with the key tool in the app container creates and lists pets through HAProxy', async () => {
    // docs/deployment.md, "Compose stack": the key tool runs in a replica's container.
    const out = await compose.run([
      'exec',
      '-T',
      'app1',
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

  it('a rolling deploy of app1, as docs/deployment.md says, under load: no failed request', async () => {
    expect(apiKey).toBeDefined();
    const traffic = new Load({
      url: apiUrl,
      apiKey,
      namePrefix: 'deploy-rolling',
      concurrency: 6,
      ratePerSecond: 60,
      maxOperations: 10_000,
      maxDurationMs: 150_000,
      createRetryBudgetMs: 10_000,
    });
    const before = await containerOf('app1');
    traffic.start();
    try {
      await traffic.progress(100);
      // The image of the next release (here the same build, tagged anew), its migrations first,
      // then app1 replaced: SIGTERM, drain, a new container; HAProxy lets it in once it is ready.
      const next = { IMAGE_TAG: NEXT_TAG };
      await timed('rolling: build', () => engine!.build('.', `animal-store-api:${NEXT_TAG}`));
      const migrated = await timed('rolling: migrate', () =>
        compose.run(['run', '--rm', 'migrate'], { env: next, timeoutMs: 120_000 }),
      );
      expect(migrated).toContain('database is up to date');
      await timed('rolling: app1 replaced', () =>
        compose.run(['up', '-d', '--no-deps', 'app1'], { env: next, timeoutMs: 120_000 }),
      );
      await timed('rolling: app1 up again', () => untilUp('app1'));
      // The new replica takes its share before the load ends.
      await traffic.progress(100);
    } finally {
      await traffic.stop();
    }
    const after = await containerOf('app1');
    expect(after).not.toBe(before);
    const image = (await engine!.podman(['inspect', '--format', '{{.ImageName}}', after])).trim();
    expect(image).toContain(`animal-store-api:${NEXT_TAG}`);
    const f = traffic.figures;
    const stats = (await send(statsUrl)).body;
    print('rolling deploy', {
      sent: f.sent,
      failed: f.failed,
      operations: f.operations,
      acknowledged: f.acknowledged.size,
      slowestMs: f.slowestMs,
      haproxyRetries: sample(stats, 'haproxy_backend_retry_warnings_total', { proxy: 'app' }),
      haproxyRedispatches: sample(stats, 'haproxy_backend_redispatch_warnings_total', { proxy: 'app' }),
    });
    if (f.samples.length > 0) console.log(`[deploy]   failures: ${f.samples.join(' | ')}`);
    expect({ failed: f.failed, operationsFailed: f.operationsFailed }).toEqual({ failed: 0, operationsFailed: 0 });
    expect(f.acknowledged.size).toBeGreaterThan(20);
  }, 600_000);
});
