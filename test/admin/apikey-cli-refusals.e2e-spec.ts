import { existsSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { RunningService, startService } from '../support/built-service.js';
import {
  KEY_TOOL_CHECKSUM_SECRET as CHECKSUM_SECRET,
  KEY_TOOL_START_TIMEOUT_MS,
  keyToolSuite,
  KEY_V1,
  keyToolJson as json,
  ListedKey as Listed,
  runKeyTool as tool,
} from '../support/key-tool.js';
import { waitFor } from '../support/wait-for.js';
import { createTestDatabase, describeEachDatabase, describeIfPostgres, TestDatabase } from '../support/databases.js';
import { scratchDir } from '../support/scratch.js';

/*
 * The key tool refusing: what a key cannot have, bad arguments (before any database opens), the
 * admin token commands and the audit entries of changes with their actors, unapplied migrations,
 * and the tool beside a server holding the embedded DATA_DIR. The everyday commands: apikey-cli.
 */

keyToolSuite();

/** What the service printed that matches, once it arrives through the pipe. */
function printed(svc: RunningService, pattern: RegExp): Promise<string> {
  return waitFor(() => pattern.exec(svc.output())?.[0], { what: `the service to print ${pattern}` });
}

describeEachDatabase('the apikey tool refusing what a key cannot have, on %s', (kind) => {
  let db: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    env = { ...db.env, API_KEY_CHECKSUM_SECRET: CHECKSUM_SECRET };
  });

  afterAll(async () => db?.drop());

  it('refuses names with control or bidirectional characters and expiries without an offset, storing nothing', async () => {
    const key = await json<Listed>(['create', '--name', 'Kappa', '--plan', 'free'], env);
    for (const [args, message] of [
      [
        ['create', '--name', 'Kappa\u202Egnp.exe', '--plan', 'free'],
        /^apikey: name must not contain control characters/,
      ],
      [['admin', 'create', '--name', 'ops\u0085'], /^apikey: name must not contain control characters/],
      [
        ['update', String(key.id), '--expires-at', '2027-01-01T00:00:00'],
        /^apikey: expiresAt \(--expires-at\) must be an RFC 3339 date-time with an offset/,
      ],
      [
        ['update', String(key.id), '--expires-at', '2027-W05-3'],
        /^apikey: expiresAt \(--expires-at\) must be an RFC 3339 date-time with an offset/,
      ],
    ] as const) {
      const run = await tool([...args], env);
      expect(run).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(message) });
      expect(run.stderr).not.toMatch(/[\u202e\u0085]/);
    }
    expect((await json<Listed[]>(['list'], env)).map((k) => k.name)).toEqual(['Kappa']);
    expect(await json<unknown[]>(['admin', 'list'], env)).toEqual([]);
  });

  it('keeps an expired key expired: update and roll refuse it, whatever they change', async () => {
    const key = await json<Listed>(['create', '--name', 'Lambda', '--plan', 'free', '--expires-in', '1s'], env);
    await waitFor(
      async () =>
        (await json<(Listed & { state: string })[]>(['list'], env)).find((k) => k.id === key.id)?.state === 'expired' ||
        undefined,
      { what: 'the key to expire' },
    );
    for (const args of [
      ['update', String(key.id), '--expires-at', 'never'],
      ['update', String(key.id), '--name', 'Lambda 2'],
      ['set-plan', String(key.id), 'pro'],
      ['roll', String(key.id)],
    ]) {
      const run = await tool(args, env);
      expect(run).toMatchObject({
        code: 1,
        stdout: '',
        stderr: `apikey: API key ${key.id} has expired; issue a new key instead\n`,
      });
    }
    expect((await json<(Listed & { state: string })[]>(['list'], env)).find((k) => k.id === key.id)).toMatchObject({
      name: 'Lambda',
      plan: 'free',
      state: 'expired',
    });
  });
});

describe('the apikey tool on bad arguments', () => {
  // Arguments are judged before any database is opened: the DATA_DIR given is never created.
  const dataDir = path.join(tmpdir(), `animal-store-usage-${process.pid}`);

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it.each([
    [[]],
    [['create', '--name', 'x']],
    [['create', '--name', 'x', '--plan', 'gold']],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '10']],
    [['create', '--name', 'x', '--plan', 'pro', '--per-day', '10']],
    [['create', '--name', 'x', '--plan', 'pro', '--bogus']],
    [['revoke', 'abc']],
    [['set-plan', '1']],
    [['delete', '1']],
    [['roll']],
    [['roll', '1', '--overlap', 'soon']],
    [['create', '--name', 'x', '--plan', 'pro', '--expires-in', '0']],
    [['admin', 'create', '--name', 'cli:root']],
    [['admin', 'create', '--name', 'system:secret-scanning']],
  ])('answers %j with the usage on stderr and exit code 2, opening no database', async (args) => {
    const run = await tool(args, { DATA_DIR: dataDir });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^apikey: .+\n\nUsage: npm run apikey -- <command>/);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('says why an admin token may not be named cli:root', async () => {
    const run = await tool(['admin', 'create', '--name', 'cli:root'], { DATA_DIR: dataDir });
    expect(run.stderr).toMatch(/^apikey: an admin token's name must not contain ":" .*cli:<user>.*"cli:root"\n/);
  });
});

describeIfPostgres('the apikey tool: admin tokens, changes and the audit log (PostgreSQL)', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  const actor = `cli:${userInfo().username}`;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    env = { ...db.env, API_KEY_CHECKSUM_SECRET: CHECKSUM_SECRET };
  });

  afterAll(async () => db?.drop());

  interface Row {
    actor: string;
    actor_kind: string;
    actor_token_id: string | null;
    action: string;
    key_id: string | null;
    changes: unknown;
  }

  async function audit(): Promise<Row[]> {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT "actor", "actor_kind", "actor_token_id"::text, "action", "key_id"::text, "changes" FROM "audit_log" ORDER BY "id"',
      );
      return rows as Row[];
    } finally {
      await client.end();
    }
  }

  it('issues an admin token once, lists it without the token, revokes it, and records both', async () => {
    const created = await json<{ id: number; name: string; prefix: string; token: string }>(
      ['admin', 'create', '--name', 'ops team'],
      env,
    );
    expect(created).toMatchObject({ id: expect.any(Number), name: 'ops team', revokedAt: null });
    expect(created.token).toMatch(/^asadm_[0-9A-Za-z]{49}$/);
    expect(created.prefix).toBe(created.token.slice(0, 14));
    const listed = await tool(['admin', 'list', '--json'], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        id: created.id,
        name: 'ops team',
        prefix: created.prefix,
        createdAt: expect.any(String),
        lastUsedAt: null,
        revokedAt: null,
      },
    ]);
    expect(listed.stdout).not.toContain(created.token.slice(14));
    const human = await tool(['admin', 'list'], env);
    expect(human.stdout).toMatch(/ops team\s+asadm_\w{8}….*active/);
    // Names are never reused: the audit log's actor names one token.
    const again = await tool(['admin', 'create', '--name', 'ops team'], env);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/exists already/) });

    expect(await json(['admin', 'revoke', String(created.id)], env)).toMatchObject({
      id: created.id,
      revokedAt: expect.any(String),
      alreadyRevoked: false,
    });
    expect(await json(['admin', 'revoke', String(created.id)], env)).toMatchObject({ alreadyRevoked: true });
    const missing = await tool(['admin', 'revoke', '999999'], env);
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/no admin token has id 999999/) });
    expect((await tool(['admin'], env)).code).toBe(2);
    expect((await tool(['admin', 'rename'], env)).code).toBe(2);

    const entries = (await audit()).filter((e) => e.action.startsWith('admin_token.'));
    expect(entries.map((e) => [e.action, e.actor, e.actor_kind, e.actor_token_id])).toEqual([
      ['admin_token.created', actor, 'key_tool', null],
      ['admin_token.revoked', actor, 'key_tool', null],
    ]);
    expect(JSON.stringify(entries)).not.toContain(created.token.slice(14));
  });

  it('changes a key with update, refuses what the service refuses, and records each change with its actor', async () => {
    const key = await json<Listed & { key: string }>(['create', '--name', 'Changer', '--plan', 'free'], env);
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    expect(
      await json(['update', String(key.id), '--name', 'Changed', '--plan', 'pro', '--expires-at', expiresAt], env),
    ).toMatchObject({ name: 'Changed', plan: 'pro', perMinute: 300, expiresAt, state: 'active' });
    expect(await json(['update', String(key.id), '--expires-at', 'never'], env)).toMatchObject({ expiresAt: null });
    for (const [args, message] of [
      [['--plan', 'enterprise'], /enterprise plan needs both/],
      [['--expires-at', '2001-01-01T00:00:00Z'], /expiresAt must be in the future/],
    ] as const) {
      const run = await tool(['update', String(key.id), ...args], env);
      expect(run).toMatchObject({ code: 1, stderr: expect.stringMatching(message) });
    }
    for (const args of [[], ['--expires-at', 'soon'], ['--plan', 'gold']]) {
      expect((await tool(['update', String(key.id), ...args], env)).code).toBe(2);
    }
    await json(['revoke', String(key.id)], env);

    const entries = (await audit()).filter((e) => e.key_id === String(key.id));
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['key.created', actor],
      ['key.updated', actor],
      ['key.updated', actor],
      ['key.revoked', actor],
    ]);
    expect(entries[1].changes).toEqual({
      name: { before: 'Changer', after: 'Changed' },
      plan: { before: 'free', after: 'pro' },
      perMinute: { before: 60, after: 300 },
      perDay: { before: 1000, after: 10000 },
      expiresAt: { before: null, after: expiresAt },
    });
    expect(JSON.stringify(entries)).not.toContain(key.key.slice(13));
  });

  it('records the person APIKEY_ACTOR names as cli:<name>, and refuses a name the log could misread', async () => {
    const key = await json<Listed & { key: string }>(['create', '--name', 'Named', '--plan', 'free'], {
      ...env,
      APIKEY_ACTOR: 'alice.ops@example',
    });
    for (const bad of ['system:credential-revocation', 'alice smith', 'x'.repeat(65), 'evil\u001b[2J']) {
      const run = await tool(['revoke', String(key.id)], { ...env, APIKEY_ACTOR: bad });
      expect(run).toMatchObject({ code: 78, stderr: expect.stringMatching(/APIKEY_ACTOR must be 1 to 64 letters/) });
    }
    await json(['revoke', String(key.id)], { ...env, APIKEY_ACTOR: 'bob' });
    const entries = (await audit()).filter((e) => e.key_id === String(key.id));
    expect(entries.map((e) => [e.action, e.actor, e.actor_kind])).toEqual([
      ['key.created', 'cli:alice.ops@example', 'key_tool'],
      ['key.revoked', 'cli:bob', 'key_tool'],
    ]);
  });
});

describeIfPostgres('the apikey tool on an unmigrated PostgreSQL database', () => {
  it('says to apply the migrations', async () => {
    const db = await createTestDatabase('postgres', { migrate: false });
    try {
      const run = await tool(['list'], db.env);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/apply the migrations/);
    } finally {
      await db.drop();
    }
  });
});

describe('the apikey tool beside a server on the embedded DATA_DIR', () => {
  let dir: string;
  let server: RunningService | undefined;

  beforeAll(() => {
    dir = scratchDir('animal-store-apikey');
  });

  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('the first start prints a development key once; the tool refuses while the server holds DATA_DIR', async () => {
    // NODE_ENV unset: development, as `npm start` runs on a developer's machine.
    server = await startService({ DATA_DIR: dir, LOG_LEVEL: 'warn' }, KEY_TOOL_START_TIMEOUT_MS);
    const devKey = await printed(server, KEY_V1);
    expect(devKey).toBeDefined();
    expect(server.output()).toMatch(/for local use only/);
    expect(server.output().split(devKey!).length - 1).toBe(1);
    expect((await fetch(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${devKey}` } })).status).toBe(200);

    const refused = await tool(['list', '--json'], { DATA_DIR: dir });
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`is in use by process ${server.child.pid}`);
    expect(refused.stderr).toMatch(/set DATABASE_URL/);

    await server.stop(); // SIGTERM: the server releases DATA_DIR on its way out
    server = undefined;
    const listed = await json<Listed[]>(['list'], { DATA_DIR: dir });
    expect(listed).toEqual([
      expect.objectContaining({ name: 'development key (local use only)', plan: 'free', revokedAt: null }),
    ]);
    expect(listed[0].lastUsedAt).not.toBeNull();

    server = await startService({ DATA_DIR: dir, LOG_LEVEL: 'warn' }, KEY_TOOL_START_TIMEOUT_MS);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(server.output()).not.toMatch(KEY_V1);
    expect((await fetch(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${devKey}` } })).status).toBe(200);
  });
});
