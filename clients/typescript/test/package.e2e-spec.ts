import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { issueApiKey, startTestApp } from '../../../test/support/app.js';
import { createTestDatabase, preferredDatabaseKind, TestDatabase } from '../../../test/support/databases.js';
import { describeIf } from '../../../test/support/describe-if.js';
import { redisEnv } from '../../../test/support/redis-env.js';

const CLIENT_DIR = path.resolve('clients/typescript');
const CONSUMER = path.resolve('clients/typescript/test/consumer/consumer.mjs');
/** The version in the client's package.json: the tarball's name and the installed package carry it. */
const VERSION = (JSON.parse(readFileSync(path.join(CLIENT_DIR, 'package.json'), 'utf8')) as { version: string })
  .version;
const TSC = path.resolve('node_modules/typescript/bin/tsc');
const PACK_LOCK = path.resolve('.tmp/client-pack.lock');
const NODE24_PACKAGE = `node@${process.env.NODE24_VERSION ?? '24'}`;
const NODE24 = ['-y', '-p', NODE24_PACKAGE, 'node'];

/**
 * The environment of a fresh shell: without what `npm test` sets for its scripts (npm_package_*,
 * npm_lifecycle_*, the workspace as local prefix), which would point npm back at this repository.
 */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_package_|npm_lifecycle_|npm_config_local_prefix$|npm_command$|INIT_CWD$|NODE_OPTIONS$)/i.test(name))
      env[name] = value;
  }
  return { ...env, ...extra };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; past `timeoutMs` its whole process group (npx's node too) is killed. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? shellEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-(child.pid as number), 'SIGKILL');
    }, options.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut)
        reject(new Error(`${command} ${args.join(' ')} took over ${options.timeoutMs} ms\n${stdout}\n${stderr}`));
      else resolve({ code, stdout, stderr });
    });
  });
}

/** Like run, and fails with the command's output unless it exits 0. */
async function succeed(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<string> {
  const result = await run(command, args, options);
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/**
 * `npm pack` rebuilds clients/typescript/dist in place (prepack), and CI runs the suite on Node 20
 * and Node 24 at the same time: one pack at a time, by a lock directory (taken over when stale).
 */
async function packedAlone(pack: () => Promise<void>): Promise<void> {
  const staleMs = 120_000;
  mkdirSync(path.dirname(PACK_LOCK), { recursive: true });
  for (const deadline = Date.now() + staleMs; !tryMkdir(PACK_LOCK);) {
    const held = statSync(PACK_LOCK, { throwIfNoEntry: false });
    if (held && Date.now() - held.mtimeMs > staleMs) rmSync(PACK_LOCK, { recursive: true, force: true });
    else if (Date.now() > deadline) throw new Error(`${PACK_LOCK} is held by another run`);
    else await new Promise((r) => setTimeout(r, 250));
  }
  try {
    await pack();
  } finally {
    rmSync(PACK_LOCK, { recursive: true, force: true });
  }
}

/** Creates a directory; false when it exists already. */
function tryMkdir(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Whether Node 24 can be had from the npm registry (as scripts/test-node24.sh gets it). */
function node24Available(): boolean {
  const probe = spawnSync('npx', [...NODE24, '-p', 'process.version'], {
    cwd: tmpdir(),
    env: shellEnv(),
    encoding: 'utf8',
    timeout: 120_000,
  });
  return probe.status === 0 && probe.stdout.trim().startsWith('v24.');
}

/** What consumer.mjs prints. */
interface Report {
  node: string;
  created: ShownPet[];
  fetched: ShownPet;
  pages: string[][];
  missing: { error: string; code: string; status: number } | undefined;
  quota: { plan: string; minuteLimit: number; remaining: number[]; banned: unknown };
  readable: number;
  refused: Record<string, unknown> | undefined;
}
interface ShownPet {
  id: string;
  idType: string;
  name: string;
  categoryId: string;
  categoryIdType: string;
}

/** A TypeScript user's code: type-checked, never run. Each @ts-expect-error fails if the types are missing (any). */
const TYPED_CONSUMER = `import {
  AnimalStoreClient,
  AnimalStoreError,
  InsufficientScopeError,
  type Pet,
  type PetsPage,
  type RateLimit,
} from '@animal-store/client';

const store = new AnimalStoreClient({ baseUrl: 'https://api.example.com/v1', apiKey: 'ask2_example' });

export async function typedUse(): Promise<string[]> {
  const pet: Pet = await store.createPet({ name: 'Typed', categoryId: 2n ** 53n + 1n });
  const id: bigint = pet.id;
  // @ts-expect-error ids are bigint, not string
  const asString: string = pet.id;
  // @ts-expect-error categoryId is a bigint: a number is refused
  await store.createPet({ name: 'Typed', categoryId: 7 });
  // @ts-expect-error createPet takes a NewPet: a name is required
  await store.createPet({ categoryId: 7n });
  const quota: RateLimit = await store.rateLimit();
  const left: number = quota.limits.day.remaining;
  // @ts-expect-error the windows are minute and day
  const hour = quota.limits.hour;
  const names: string[] = [asString, String(left), String(hour)];
  for await (const page of store.pages({ limit: 2 })) {
    const typedPage: PetsPage = page;
    names.push(...typedPage.pets.map((p) => p.name));
  }
  try {
    await store.getPet(id);
  } catch (err) {
    if (err instanceof InsufficientScopeError) return [err.requiredScope ?? '', err.requestId ?? ''];
    if (err instanceof AnimalStoreError && err.code === 'not_found') return [];
    // @ts-expect-error code is the service's error codes: no such code
    if (err instanceof AnimalStoreError && err.code === 'no_such_code') return [];
  }
  return names;
}
`;

const TYPED_TSCONFIG = {
  compilerOptions: {
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'ES2022',
    // The client's types use the web's fetch types (Request, Headers, AbortSignal): lib DOM has them.
    lib: ['ES2022', 'DOM'],
    types: [],
    strict: true,
    noEmit: true,
  },
  files: ['consumer.ts'],
};

/**
 * The client as a user gets it: `npm pack` (which builds dist/), installed from the tarball into a
 * project of its own outside the repository, used from plain JavaScript on Node 20 and Node 24
 * against the running service, and from TypeScript (nodenext) type-checked against its .d.ts.
 */
describe('the client as a package (npm pack, installed in a project of its own)', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let baseUrl: string;
  let key: string;
  let readOnlyKey: string;
  /** The temporary directory: the tarball (packs/) and the user's project (user/). */
  let project: string;
  let userDir: string;
  const redis = redisEnv('client-package');

  beforeAll(async () => {
    project = mkdtempSync(path.join(tmpdir(), 'animal-store-client-user-'));
    const packs = path.join(project, 'packs');
    mkdirSync(packs);
    await packedAlone(async () => {
      await succeed('npm', ['pack', '--pack-destination', packs], { cwd: CLIENT_DIR, timeoutMs: 90_000 });
    });
    const [tarball] = readdirSync(packs).filter((f) => f.endsWith('.tgz'));
    expect(tarball).toBe(`animal-store-client-${VERSION}.tgz`);

    userDir = path.join(project, 'user');
    mkdirSync(userDir);
    writeFileSync(
      path.join(userDir, 'package.json'),
      JSON.stringify({ name: 'client-user', version: '1.0.0', private: true, type: 'module' }, null, 2),
    );
    await succeed('npm', ['install', path.join(packs, tarball), '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: userDir,
      timeoutMs: 120_000,
    });
    copyFileSync(CONSUMER, path.join(userDir, 'consumer.mjs'));
    writeFileSync(path.join(userDir, 'consumer.ts'), TYPED_CONSUMER);
    writeFileSync(path.join(userDir, 'tsconfig.json'), JSON.stringify(TYPED_TSCONFIG, null, 2));

    db = await createTestDatabase(preferredDatabaseKind());
    app = await startTestApp(db, { env: redis.env });
    await app.listen(0, '127.0.0.1');
    baseUrl = `${await app.getUrl()}/v1`;
    key = await issueApiKey(app);
    readOnlyKey = await issueApiKey(app, { name: 'read-only consumer', scopes: ['pets:read'] });
  }, 300_000);

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    await redis.cleanup();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  /** Runs consumer.mjs with `node` (argv[0] and the arguments before the script) and reads its report. */
  async function consume(node: string[]): Promise<Report> {
    const [command, ...args] = node;
    const stdout = await succeed(command, [...args, 'consumer.mjs'], {
      cwd: userDir,
      env: shellEnv({ ANIMAL_STORE_URL: baseUrl, ANIMAL_STORE_KEY: key, ANIMAL_STORE_READ_ONLY_KEY: readOnlyKey }),
      timeoutMs: 120_000,
    });
    process.stdout.write(`consumer.mjs: ${stdout}`);
    return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Report;
  }

  function expectWorkingClient(report: Report): void {
    const categoryId = String(2n ** 53n + 1n);
    expect(report.created).toHaveLength(3);
    for (const pet of report.created) {
      expect(pet).toEqual({
        id: expect.stringMatching(/^\d+$/),
        idType: 'bigint',
        name: expect.stringContaining(report.node),
        categoryId,
        categoryIdType: 'bigint',
      });
    }
    expect(report.fetched).toEqual(report.created[0]);
    // Every page holds at most 2 (the limit asked), there are several, and they cover the list in id order.
    expect(report.pages.length).toBeGreaterThanOrEqual(2);
    for (const page of report.pages) expect(page.length).toBeLessThanOrEqual(2);
    const listed = report.pages.flat().map(BigInt);
    expect(listed).toEqual([...listed].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(listed).toEqual(expect.arrayContaining(report.created.map((p) => BigInt(p.id))));
    expect(report.missing).toEqual({ error: 'AnimalStoreError', code: 'not_found', status: 404 });
    // rateLimit() reads the quota without spending it: the second read finds what the first did.
    expect(report.quota).toEqual({
      plan: 'enterprise',
      minuteLimit: 1_000_000_000,
      remaining: [expect.any(Number), report.quota.remaining[0]],
      banned: null,
    });
    expect(report.quota.remaining[0]).toBeLessThan(1_000_000_000);
    expect(report.readable).toBe(1);
    expect(report.refused).toEqual({
      error: 'InsufficientScopeError',
      isAnimalStoreError: true,
      code: 'insufficient_scope',
      status: 403,
      requiredScope: 'pets:write',
      requestId: true,
    });
  }

  it('works from plain JavaScript (ESM) on this Node (process.execPath)', async () => {
    const report = await consume([process.execPath]);
    expect(report.node).toBe(process.version);
    expectWorkingClient(report);
  }, 120_000);

  describeIf(
    node24Available(),
    `${NODE24_PACKAGE} cannot be fetched from the npm registry (npx -y -p ${NODE24_PACKAGE}): the client package is not tried on Node 24`,
  )('on Node 24', () => {
    it('works from plain JavaScript (ESM) on Node 24 (npx -y -p node@24 node)', async () => {
      const report = await consume(['npx', ...NODE24]);
      expect(report.node).toMatch(/^v24\./);
      expectWorkingClient(report);
    }, 120_000);
  });

  it('installs the version of package.json, with its README and CHANGELOG (which has an entry for it)', () => {
    const installed = path.join(userDir, 'node_modules/@animal-store/client');
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as { version: string };
    expect(manifest.version).toBe(VERSION);
    expect(existsSync(path.join(installed, 'README.md'))).toBe(true);
    expect(readFileSync(path.join(installed, 'CHANGELOG.md'), 'utf8')).toContain(`\n## ${VERSION} - `);
  });

  it('type-checks a TypeScript user (moduleResolution nodenext) against its .d.ts, found through exports', async () => {
    const result = await run(process.execPath, [TSC, '-p', 'tsconfig.json', '--listFiles'], {
      cwd: userDir,
      timeoutMs: 120_000,
    });
    expect(result.stderr).toBe('');
    // Errors go to stdout; with none, it lists the files the program was checked with.
    expect({ code: result.code, errors: result.stdout.split('\n').filter((l) => l.includes('error TS')) }).toEqual({
      code: 0,
      errors: [],
    });
    expect(result.stdout.split('\n')).toContain(
      path.join(userDir, 'node_modules/@animal-store/client/dist/index.d.ts'),
    );
  }, 120_000);
});
