import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { USAGE } from '../../src/cli/apikey.args.js';
import { openDatabase } from '../../src/database/open-database.js';
import { buildService, RunningService, startService } from '../support/built-service.js';
import { runKeyTool } from '../support/key-tool.js';
import { waitFor } from '../support/wait-for.js';
import { createTestDatabase, describeEachDatabase, describeIfPostgres, TestDatabase } from '../support/databases.js';

/** The key tool as a user runs it (`npm run apikey -- …` is `node dist/cli/apikey.js …`). */
const tool = runKeyTool;

/** Runs the tool with --json and returns the one JSON line it printed. */
async function json<T>(args: string[], env: Record<string, string>): Promise<T> {
  const run = await tool([...args, '--json'], env);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  expect(run.stdout.endsWith('\n')).toBe(true);
  expect(run.stdout.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(run.stdout) as T;
}

interface Listed {
  id: number;
  name: string;
  plan: string;
  perMinute: number;
  perDay: number;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Version 1 keys: the development key (no checksum secret in development). */
const KEY_V1 = /ask_[0-9A-Za-z]{49}/;
/** Version 2 keys: what the tool issues with API_KEY_CHECKSUM_SECRET. */
const KEY = /ask2_[0-9A-Za-z]{65}/;
const CHECKSUM_SECRET = 'tool-test-checksum-secret-0123456789abcdef';

// Each run of the tool on the embedded database starts PGlite (seconds on a busy machine).
jest.setTimeout(180_000);
const START_TIMEOUT_MS = 90_000;

/** What the service printed that matches, once it arrives through the pipe. */
function printed(svc: RunningService, pattern: RegExp): Promise<string> {
  return waitFor(() => pattern.exec(svc.output())?.[0], { what: `the service to print ${pattern}` });
}

beforeAll(() => {
  buildService();
}, 180_000);

describeEachDatabase('the apikey tool on %s', (kind) => {
  let db: TestDatabase;
  let env: Record<string, string>;
  const secrets: string[] = [];

  beforeAll(async () => {
    // On the embedded default an empty DATA_DIR, as for someone whose first command is the key
    // tool: it initialises and migrates the database itself.
    db = await createTestDatabase(kind, { migrate: kind === 'postgres' });
    env = { ...db.env, API_KEY_CHECKSUM_SECRET: CHECKSUM_SECRET };
  });

  afterAll(async () => db?.drop());

  it('creates keys and shows each secret once', async () => {
    const a = await json<Listed & { key: string }>(['create', '--name', 'Alpha app', '--plan', 'pro'], env);
    expect(a).toEqual({
      id: expect.any(Number),
      key: expect.stringMatching(new RegExp(`^${KEY.source}$`)),
      name: 'Alpha app',
      plan: 'pro',
      perMinute: 300,
      perDay: 10_000,
      prefix: a.key.slice(0, 13),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      leakedAt: null,
      expiresAt: null,
      previousSecretExpiresAt: null,
      scopes: ['pets:read', 'pets:write'],
      state: 'active',
    });
    const b = await json<Listed & { key: string }>(
      ['create', '--name', 'Big customer', '--plan', 'enterprise', '--per-minute', '5000', '--per-day', '2000000'],
      env,
    );
    expect(b).toMatchObject({ plan: 'enterprise', perMinute: 5000, perDay: 2_000_000 });
    const human = await tool(['create', '--name', 'Free tier', '--plan', 'free'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /Issued API key \d+ "Free tier" \(plan free: 60\/minute, 1000\/day; scopes pets:read,pets:write\)/,
    );
    expect(human.stdout).toMatch(KEY);
    expect(human.stderr).not.toMatch(KEY);
    secrets.push(a.key, b.key, KEY.exec(human.stdout)![0]);
    expect(new Set(secrets).size).toBe(3);
  });

  it('lists keys in order of creation, never showing a secret', async () => {
    const listed = await json<Listed[]>(['list'], env);
    expect(listed.map((k) => k.name)).toEqual(['Alpha app', 'Big customer', 'Free tier']);
    expect(listed.map((k) => k.id)).toEqual([...listed.map((k) => k.id)].sort((x, y) => x - y));
    for (const k of listed) {
      expect(Object.keys(k).sort()).toEqual([
        'createdAt',
        'expiresAt',
        'id',
        'lastUsedAt',
        'leakedAt',
        'name',
        'perDay',
        'perMinute',
        'plan',
        'prefix',
        'previousSecretExpiresAt',
        'revokedAt',
        'scopes',
        'state',
      ]);
    }
    const human = await tool(['list'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ID\s+NAME\s+PLAN/);
    expect(human.stdout).toContain('Big customer');
    for (const out of [JSON.stringify(listed), human.stdout]) {
      for (const secret of secrets) expect(out).not.toContain(secret.slice(13));
    }
  });

  it('revokes a key, idempotently, and says so for an unknown id', async () => {
    const [alpha] = await json<Listed[]>(['list'], env);
    const revoked = await json<Listed & { alreadyRevoked: boolean }>(['revoke', String(alpha.id)], env);
    expect(revoked).toMatchObject({ id: alpha.id, revokedAt: expect.any(String), alreadyRevoked: false });
    const again = await tool(['revoke', String(alpha.id)], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/already revoked/);
    const missing = await tool(['revoke', '999999'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no API key has id 999999/);
    const [first] = await json<Listed[]>(['list'], env);
    expect(first.revokedAt).toBe(revoked.revokedAt);
  });

  it('moves a key to another plan', async () => {
    const listed = await json<Listed[]>(['list'], env);
    const free = listed.find((k) => k.name === 'Free tier')!;
    expect(await json<Listed>(['set-plan', String(free.id), 'business'], env)).toMatchObject({
      plan: 'business',
      perMinute: 1000,
      perDay: 100_000,
    });
    expect(
      await json<Listed>(['set-plan', String(free.id), 'enterprise', '--per-minute', '7', '--per-day', '70'], env),
    ).toMatchObject({
      plan: 'enterprise',
      perMinute: 7,
      perDay: 70,
    });
    const human = await tool(['set-plan', String(free.id), 'pro'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/plan pro: 300\/minute, 10000\/day/);
    const revoked = listed.find((k) => k.revokedAt !== null)!;
    const refused = await tool(['set-plan', String(revoked.id), 'pro'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/revoked/);
  });

  it("issues a key with fewer scopes, and replaces a key's scopes", async () => {
    const reader = await json<Listed & { scopes: string[] }>(
      ['create', '--name', 'Catalogue', '--plan', 'pro', '--scopes', 'pets:read'],
      env,
    );
    expect(reader.scopes).toEqual(['pets:read']);
    const listed = await json<Listed[]>(['list'], env);
    const free = listed.find((k) => k.name === 'Free tier')!;
    expect(await json<Listed>(['set-scopes', String(free.id), 'pets:read'], env)).toMatchObject({
      id: free.id,
      scopes: ['pets:read'],
    });
    const human = await tool(['list'], env);
    expect(human.stdout).toMatch(/Free tier .* pets:read {2}/);
    const bad = await tool(['set-scopes', String(free.id), 'pets:delete'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/scopes must be a comma-separated list of pets:read, pets:write/);
    const revoked = listed.find((k) => k.revokedAt !== null)!;
    const refused = await tool(['set-scopes', String(revoked.id), 'pets:read'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/revoked/);
  });

  it('issues keys the service accepts, and refuses the revoked one', async () => {
    const svc = await startService({ ...env, LOG_LEVEL: 'warn' }, START_TIMEOUT_MS);
    try {
      const ok = await fetch(`${svc.url}/v1/pets`, { headers: { authorization: `Bearer ${secrets[1]}` } });
      expect(ok.status).toBe(200);
      // The key set to pets:read by the tool lists, and may not create.
      const reads = await fetch(`${svc.url}/v1/pets`, { headers: { authorization: `Bearer ${secrets[2]}` } });
      expect(reads.status).toBe(200);
      const creates = await fetch(`${svc.url}/v1/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secrets[2]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Rex', categoryId: 7 }),
      });
      expect(creates.status).toBe(403);
      expect(creates.headers.get('www-authenticate')).toBe(
        'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"',
      );
      const revoked = await fetch(`${svc.url}/v1/pets`, { headers: { authorization: `Bearer ${secrets[0]}` } });
      expect(revoked.status).toBe(401);
      expect(await revoked.json()).toEqual({
        code: 'invalid_api_key',
        message: expect.any(String),
        status: 401,
        requestId: revoked.headers.get('x-request-id'),
      });
    } finally {
      await svc.stop();
    }
  });

  it('issues a key that expires, and rolls a key: the old secret works through the overlap, the new one at once', async () => {
    const before = Date.now();
    const expiring = await json<Listed & { key: string; expiresAt: string; state: string }>(
      ['create', '--name', 'Quarterly', '--plan', 'pro', '--expires-in', '90d'],
      env,
    );
    const expiresAt = Date.parse(expiring.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 90 * 86_400_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 90 * 86_400_000);
    expect(expiring.state).toBe('active');

    const rolled = await json<Listed & { key: string; previousSecretExpiresAt: string }>(
      ['roll', String(expiring.id), '--overlap', '1h'],
      env,
    );
    expect(rolled).toMatchObject({ id: expiring.id, plan: 'pro', previousSecretExpiresAt: expect.any(String) });
    expect(rolled.key).toMatch(new RegExp(`^${KEY.source}$`));
    expect(rolled.key).not.toBe(expiring.key);
    const big = (await json<Listed[]>(['list'], env)).find((k) => k.name === 'Big customer')!;
    const dropped = await json<Listed & { key: string }>(['roll', String(big.id), '--overlap', '0'], env);
    const human = await tool(['list'], env);
    expect(human.stdout).toMatch(/Quarterly .* active until \S+; old secret until \S+/);

    const svc = await startService({ ...env, LOG_LEVEL: 'warn' }, START_TIMEOUT_MS);
    try {
      const status = async (key: string) =>
        (await fetch(`${svc.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })).status;
      expect(await status(rolled.key)).toBe(200);
      expect(await status(expiring.key)).toBe(200); // within its overlap
      expect(await status(dropped.key)).toBe(200);
      // Rolled with --overlap 0: forgotten at once, so unknown, as the tool's help and docs/api-keys.md say.
      const old = await fetch(`${svc.url}/v1/pets`, { headers: { authorization: `Bearer ${secrets[1]}` } });
      expect(old.status).toBe(401);
      expect(await old.json()).toMatchObject({ code: 'invalid_api_key', status: 401 });
      expect(USAGE).toMatch(/--overlap 0 it is forgotten at once and gets 401 invalid_api_key/);
    } finally {
      await svc.stop();
    }
  });
  it('verifies the audit log, and names the first entry changed, removed or inserted out of order', async () => {
    interface Verdict {
      ok: boolean;
      entries: number;
      head?: { id: string; hash: string };
      entryId?: string;
      problem?: string;
    }
    const verify = async (): Promise<{ code: number | null; verdict: Verdict }> => {
      const run = await tool(['audit', 'verify', '--json'], env);
      return { code: run.code, verdict: JSON.parse(run.stdout) as Verdict };
    };
    /** Tampers as the database's owner would, the audit log's triggers set aside. */
    const asOwner = async (...statements: string[]): Promise<void> => {
      const database = await openDatabase(db.config().database, () => {}, 'audit tamper test');
      try {
        await database.withRunner((runner) =>
          runner.exec(
            [
              'BEGIN',
              'ALTER TABLE "audit_log" DISABLE TRIGGER USER',
              ...statements,
              'ALTER TABLE "audit_log" ENABLE TRIGGER USER',
              'COMMIT',
            ].join(';\n'),
          ),
        );
      } finally {
        await database.close();
      }
    };

    // The tests above have appended more than ten entries, so an order of ids as text (1, 10, 2) breaks the walk.
    const clean = await verify();
    expect(clean).toEqual({
      code: 0,
      verdict: { ok: true, entries: expect.any(Number), head: { id: expect.any(String), hash: expect.any(String) } },
    });
    expect(clean.verdict.entries).toBeGreaterThanOrEqual(3);
    const human = await tool(['audit', 'verify'], env);
    expect(human.stdout).toBe(
      `The audit log's hash chain holds over its ${clean.verdict.entries} entries.\nLast entry: ${clean.verdict.head?.id}, hash ${clean.verdict.head?.hash}\n`,
    );

    // Entry 2 changed, then changed back.
    await asOwner(`UPDATE "audit_log" SET "actor" = 'cli:someone-else' WHERE "id" = 2`);
    expect(await verify()).toMatchObject({ code: 3, verdict: { ok: false, entryId: '2', problem: 'changed' } });
    const broken = await tool(['audit', 'verify'], env);
    expect(broken).toMatchObject({
      code: 3,
      stdout: expect.stringMatching(/^The audit log does not verify: entry 2 was changed/),
    });
    await asOwner(`UPDATE "audit_log" SET "actor" = 'cli:${userInfo().username}' WHERE "id" = 2`);
    expect((await verify()).code).toBe(0);

    // Entry 2 removed (kept aside, then put back as it was).
    await asOwner(
      'CREATE TABLE "kept" AS SELECT * FROM "audit_log" WHERE "id" = 2',
      'DELETE FROM "audit_log" WHERE "id" = 2',
    );
    expect(await verify()).toMatchObject({ code: 3, verdict: { ok: false, entryId: '3', problem: 'removed' } });
    await asOwner('INSERT INTO "audit_log" SELECT * FROM "kept"', 'DROP TABLE "kept"');
    expect((await verify()).code).toBe(0);

    // An entry slipped in before all others, with a hash that holds for the start of the log.
    await asOwner(
      `INSERT INTO "audit_log" ("id", "at", "actor_kind", "actor", "action", "changes", "prev_hash", "hash")
         SELECT 0, now(), 'key_tool', 'cli:root', 'key.revoked', '{}', repeat('0', 64),
                audit_entry_hash(repeat('0', 64), 0, now()::timestamptz(3), 'key_tool', 'cli:root', NULL, 'key.revoked', NULL, NULL, '{}')`,
    );
    expect(await verify()).toMatchObject({ code: 3, verdict: { ok: false, entryId: '0', problem: 'inserted' } });
    await asOwner('DELETE FROM "audit_log" WHERE "id" = 0');
    expect(await verify()).toEqual(clean);
  });
});

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
    dir = mkdtempSync(path.join(tmpdir(), 'animal-store-apikey-'));
  });

  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('the first start prints a development key once; the tool refuses while the server holds DATA_DIR', async () => {
    // NODE_ENV unset: development, as `npm start` runs on a developer's machine.
    server = await startService({ DATA_DIR: dir, LOG_LEVEL: 'warn' }, START_TIMEOUT_MS);
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

    server = await startService({ DATA_DIR: dir, LOG_LEVEL: 'warn' }, START_TIMEOUT_MS);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(server.output()).not.toMatch(KEY_V1);
    expect((await fetch(`${server.url}/v1/pets`, { headers: { authorization: `Bearer ${devKey}` } })).status).toBe(200);
  });
});
