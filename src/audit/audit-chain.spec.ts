import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { int64 } from '../../test/support/arbitraries.js';
import { EMBEDDED_EXTENSIONS } from '../database/embedded-database.js';
import { readMigrations } from '../database/migrator.js';
import { canonicalEntry, chainFields, entryHash, GENESIS_HASH, verifyChain, type ChainEntry } from './audit-chain.js';

// PGlite starts and migrates in seconds on a busy machine.
jest.setTimeout(120_000);

describe('the audit chain computed in Node and by the migration’s SQL', () => {
  let db: PGlite;

  beforeAll(async () => {
    db = new PGlite({ extensions: EMBEDDED_EXTENSIONS });
    for (const m of await readMigrations('prisma/migrations')) await db.exec(m.sql);
  });

  afterAll(async () => db?.close());

  it('gives the same text and hash for any entry', async () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 30 });
    const id = int64;
    const value = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 10 }).map((s) => s.replaceAll('\u0000', '')),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(text, { maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          prevHash: fc.constantFrom(GENESIS_HASH, 'ab'.repeat(32)),
          id,
          at: fc.date({
            min: new Date('2000-01-01T00:00:00Z'),
            max: new Date('2100-01-01T00:00:00Z'),
            noInvalidDate: true,
          }),
          actorKind: fc.constantFrom('admin_token', 'key_tool', 'system'),
          actor: text,
          actorTokenId: fc.option(id),
          action: fc.constantFrom('key.created', 'key.revoked'),
          keyId: fc.option(id),
          adminTokenId: fc.option(id),
          changes: fc.dictionary(
            text.map((k) => k.replaceAll('\u0000', '')),
            fc.record({ before: value, after: value }),
            { maxKeys: 4 },
          ),
        }),
        async (entry) => {
          const args = chainFields({ ...entry, changes: JSON.stringify(entry.changes) });
          const call = `($1, $2::bigint, $3::timestamptz, $4, $5, $6::bigint, $7, $8::bigint, $9::bigint, $10::jsonb)`;
          const {
            rows: [sql],
          } = await db.query<{ text: string; hash: string; changes: string }>(
            `SELECT audit_entry_canonical${call} AS text, audit_entry_hash${call} AS hash, $10::jsonb::text AS changes`,
            args,
          );
          const node = { ...entry, changes: sql.changes };
          expect(canonicalEntry(node)).toBe(sql.text);
          expect(entryHash(node)).toBe(sql.hash);
        },
      ),
      { numRuns: 200 },
    );
  });
});

/** A chain of `n` entries as append_audit_entry writes them. */
function chain(n: number): ChainEntry[] {
  const entries: ChainEntry[] = [];
  let prevHash = GENESIS_HASH;
  for (let i = 1; i <= n; i++) {
    const entry = {
      id: BigInt(i),
      at: new Date(Date.UTC(2026, 10, 1, 0, 0, i)),
      actorKind: 'key_tool',
      actor: 'cli:root',
      actorTokenId: null,
      action: 'key.created',
      keyId: BigInt(i),
      adminTokenId: null,
      changes: `{"name": {"after": "k${i}", "before": null}}`,
      prevHash,
    };
    prevHash = entryHash(entry);
    entries.push({ ...entry, hash: prevHash });
  }
  return entries;
}

async function* each(entries: ChainEntry[]): AsyncGenerator<ChainEntry> {
  yield* entries;
}

/** An entry with hashes that hold for what it claims to follow. */
function forged(id: bigint, prevHash: string): ChainEntry {
  const entry = { ...chain(1)[0], id, actor: 'cli:mallory', prevHash };
  return { ...entry, hash: entryHash(entry) };
}

describe('verifyChain', () => {
  it('holds over an intact chain, naming its last entry, and over an empty one', async () => {
    const entries = chain(5);
    expect(await verifyChain(each(entries))).toEqual({ ok: true, entries: 5, head: { id: 5n, hash: entries[4].hash } });
    expect(await verifyChain(each([]))).toEqual({ ok: true, entries: 0, head: null });
  });

  it.each([1, 3, 5])('names entry %i of 5 when its fields were changed', async (id) => {
    const entries = chain(5);
    entries[id - 1] = { ...entries[id - 1], actor: 'someone else' };
    expect(await verifyChain(each(entries))).toMatchObject({ ok: false, entryId: BigInt(id), problem: 'changed' });
  });

  it('names the entry after a removed one, also when the first or the hashes were rewritten', async () => {
    const entries = chain(5);
    expect(await verifyChain(each(entries.filter((e) => e.id !== 3n)))).toMatchObject({
      ok: false,
      entryId: 4n,
      problem: 'removed',
      message: expect.stringMatching(/entry 4 does not follow entry 2/),
    });
    expect(await verifyChain(each(entries.slice(1)))).toMatchObject({ entryId: 2n, problem: 'removed' });
    // Entry 3 changed with its hash recomputed: entry 4 no longer follows it.
    const rewritten = chain(5);
    rewritten[2] = forged(3n, rewritten[1].hash);
    expect(await verifyChain(each(rewritten))).toMatchObject({ entryId: 4n, problem: 'removed' });
  });

  it('names an entry inserted out of order, with or without hashes that hold', async () => {
    const entries = chain(4);
    for (const [at, intruder] of [
      [0, forged(0n, GENESIS_HASH)],
      [0, { ...forged(0n, GENESIS_HASH), hash: 'f'.repeat(64) }],
      [2, forged(2n, entries[1].hash)],
      [2, { ...forged(2n, entries[1].hash), prevHash: 'e'.repeat(64) }],
    ] as const) {
      const tampered = [...entries.slice(0, at), intruder, ...entries.slice(at)];
      expect(await verifyChain(each(tampered))).toMatchObject({
        ok: false,
        entryId: intruder.id,
        problem: 'inserted',
      });
    }
  });
});
