import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildService, freePort } from '../support/built-service.js';
import { scratchDir } from '../support/scratch.js';

/**
 * The built entry points (server, migrate command, key tool) as an operator starts them, with
 * settings that are wrong: each exits 78 with ONE message that lists every problem, before it
 * prints, opens or listens on anything.
 */
interface Run {
  code: number | null;
  output: string;
}

const SERVER = 'main.js';
const MIGRATE = 'database/migrate.main.js';
const TOOL = 'cli/apikey.js';

/** Runs a built entry point to its end (killed after `timeoutMs`: a start that hangs fails the test). */
function run(entry: string, env: Record<string, string>, args: string[] = [], timeoutMs = 30_000): Promise<Run> {
  const script = path.join(path.dirname(buildService()), entry);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The problems of a `configuration error` message, which must be all the process printed. */
function problems(output: string): string[] {
  const one = /^configuration error: (.+)\n$/.exec(output);
  if (one) return [one[1]];
  const many = /^configuration error \((\d+) problems\):\n((?: {2}- .+\n)+)$/.exec(output);
  if (!many) throw new Error(`not one configuration error message:\n${output}`);
  const listed = many[2]
    .trimEnd()
    .split('\n')
    .map((line) => line.replace(/^ {2}- /, ''));
  expect(listed).toHaveLength(Number(many[1]));
  return listed;
}

/** A development key, as the first start on an empty embedded database prints it. */
const DEV_KEY = /ask_[0-9A-Za-z]{49}/;

jest.setTimeout(120_000);

let scratch: string;
let dataDir: string;
let port: number;

beforeAll(async () => {
  buildService();
  scratch = scratchDir('animal-store-config');
  port = await freePort();
}, 180_000);

beforeEach(() => {
  dataDir = mkdtempSync(path.join(scratch, 'data-'));
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The server on the embedded database in a fresh DATA_DIR, as on a developer's machine. */
const server = (env: Record<string, string>) =>
  run(SERVER, { HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env });

describe('the server refuses bad settings before it acts', () => {
  it('refuses a TRUST_PROXY that Express would not take, naming the entry, and opens no database', async () => {
    const { code, output } = await server({ TRUST_PROXY: 'maybe' });
    expect(code).toBe(78);
    expect(problems(output)).toEqual([
      expect.stringMatching(/^TRUST_PROXY must be .*got "maybe" \(invalid IP address: maybe\)$/),
    ]);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('refuses a HOST that does not resolve without printing a development key', async () => {
    const { code, output } = await server({ HOST: 'not-a-host.invalid' });
    expect(code).toBe(78);
    expect(output).not.toMatch(DEV_KEY);
    expect(problems(output)).toEqual([expect.stringMatching(/^HOST "not-a-host\.invalid" does not resolve/)]);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('refuses two listeners on one port (ADMIN_PORT equal to METRICS_PORT) before it listens on either', async () => {
    const other = await freePort();
    const { code, output } = await server({ ADMIN_PORT: String(other), METRICS_PORT: String(other) });
    expect(code).toBe(78);
    expect(problems(output)).toEqual([
      `ADMIN_PORT must differ from METRICS_PORT (${other}): each listener needs a port of its own`,
    ]);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('refuses a DATA_DIR that is a file', async () => {
    const file = path.join(scratch, 'a-file');
    writeFileSync(file, 'not a directory');
    const { code, output } = await server({ DATA_DIR: file });
    expect(code).toBe(78);
    expect(problems(output)).toEqual([
      `DATA_DIR ${file} is a file, not a directory: give the embedded database a directory of its own (it is created when missing)`,
    ]);
  });

  it('refuses at once a DATA_DIR that cannot be created (under /proc)', async () => {
    const { code, output } = await server({ DATA_DIR: '/proc/animal-store-nope' });
    expect(code).toBe(78);
    expect(problems(output)).toEqual([
      expect.stringMatching(/^DATA_DIR \/proc\/animal-store-nope cannot be created: /),
    ]);
  });

  it('reports every missing production setting of one start in one message', async () => {
    const { code, output } = await server({ NODE_ENV: 'production', TRUST_PROXY: 'true' });
    expect(code).toBe(78);
    expect(output).not.toMatch(DEV_KEY);
    const listed = problems(output);
    expect(listed).toHaveLength(3);
    expect(listed).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^METRICS_TOKEN or METRICS_PORT is required with NODE_ENV=production/),
        expect.stringMatching(/^API_KEY_CHECKSUM_SECRET is required with NODE_ENV=production/),
        expect.stringMatching(/^TRUST_PROXY=true trusts every hop/),
      ]),
    );
  });

  it('lists the bad values of the parsing and of the start-up checks together', async () => {
    const file = path.join(scratch, 'another-file');
    writeFileSync(file, '');
    const { code, output } = await server({
      PORT: 'eighty',
      TRUST_PROXY: 'maybe',
      HOST: 'not-a-host.invalid',
      DATA_DIR: file,
    });
    expect(code).toBe(78);
    expect(
      problems(output)
        .map((p) => /^[A-Z_]+/.exec(p)?.[0])
        .sort(),
    ).toEqual(['DATA_DIR', 'HOST', 'PORT', 'TRUST_PROXY']);
  });
});

describe('the migrate command refuses bad settings before it acts', () => {
  it('wants DIRECT_URL when DATABASE_URL goes through a pooler (pgbouncer=true)', async () => {
    const { code, output } = await run(MIGRATE, {
      DATABASE_URL: 'postgresql://app@127.0.0.1:1/x?pgbouncer=true',
      NODE_ENV: 'production',
    });
    expect(code).toBe(78);
    expect(problems(output)).toEqual([expect.stringMatching(/^DATABASE_URL has pgbouncer=true: set DIRECT_URL/)]);
  });

  it('checks only the database settings, all of them at once', async () => {
    const { code, output } = await run(MIGRATE, {
      NODE_ENV: 'production',
      DATA_DIR: '/proc/animal-store-nope',
      DB_STATEMENT_TIMEOUT_MS: 'ten',
      TRUST_PROXY: 'maybe', // the server's, not the migrate command's
    });
    expect(code).toBe(78);
    expect(
      problems(output)
        .map((p) => /^[A-Z_]+/.exec(p)?.[0])
        .sort(),
    ).toEqual(['DATA_DIR', 'DB_STATEMENT_TIMEOUT_MS']);
  });
});

describe('the key tool refuses bad settings before it acts', () => {
  it('checks the database settings and the key secrets, all at once', async () => {
    const { code, output } = await run(
      TOOL,
      { NODE_ENV: 'production', DATA_DIR: '/proc/animal-store-nope', METRICS_TOKEN: 'x' },
      ['list'],
    );
    expect(code).toBe(78);
    const listed = problems(output);
    expect(listed.map((p) => /^[A-Z_]+/.exec(p)?.[0]).sort()).toEqual(['API_KEY_CHECKSUM_SECRET', 'DATA_DIR']);
  });

  it('says in one plain line which database it cannot reach and what to check', async () => {
    const { code, output } = await run(
      TOOL,
      { DATABASE_URL: 'postgresql://postgres:hunter2@127.0.0.1:1/nowhere', DB_CONNECT_TIMEOUT_MS: '2000' },
      ['list'],
    );
    expect(code).toBe(1);
    expect(output).toBe(
      'apikey: cannot reach the database at 127.0.0.1:1/nowhere: connection refused (ECONNREFUSED); ' +
        'check DATABASE_URL (host, port, user, database) and that PostgreSQL runs there and accepts connections\n',
    );
  });
});
