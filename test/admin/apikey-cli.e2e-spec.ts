import { userInfo } from 'node:os';
import { USAGE } from '../../src/cli/apikey.args.js';
import { openDatabase } from '../../src/database/open-database.js';
import { startService } from '../support/built-service.js';
import {
  KEY_TOOL_CHECKSUM_SECRET as CHECKSUM_SECRET,
  KEY_TOOL_START_TIMEOUT_MS,
  keyToolSuite,
  KEY_V2 as KEY,
  keyToolJson as json,
  ListedKey as Listed,
  runKeyTool as tool,
} from '../support/key-tool.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';

/*
 * The key tool (`npm run apikey -- …`, i.e. `node dist/cli/apikey.js …`) as a user runs it, on
 * each database: issuing, listing, revoking, changing and rolling keys, and verifying the audit
 * log. Its refusals, admin tokens and the tool beside a running server: apikey-cli-refusals.
 */

keyToolSuite();

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
    const svc = await startService({ ...env, LOG_LEVEL: 'warn' }, KEY_TOOL_START_TIMEOUT_MS);
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

    const svc = await startService({ ...env, LOG_LEVEL: 'warn' }, KEY_TOOL_START_TIMEOUT_MS);
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
