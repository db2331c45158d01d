import { createHash } from 'node:crypto';

/**
 * The audit log's hash chain (docs/security.md, "The audit log"): each entry's hash is SHA-256
 * over the previous entry's hash and its own fields, written by the database's
 * append_audit_entry() and recomputed here by `npm run apikey -- audit verify`. The text hashed
 * is the migration's audit_entry_canonical(): each field as `<UTF-8 byte length>:<text>` and a
 * newline, `~` and a newline for null; `changes` as PostgreSQL prints the jsonb value, read as
 * text (jsonb keeps one form of a value, so its text is the same whoever reads it).
 */
export const GENESIS_HASH = '0'.repeat(64);

/** An entry as the chain covers it, read from audit_log. */
export interface ChainEntry {
  id: bigint;
  at: Date;
  actorKind: string;
  actor: string;
  actorTokenId: bigint | null;
  action: string;
  keyId: bigint | null;
  adminTokenId: bigint | null;
  /** `changes::text`. */
  changes: string;
  prevHash: string;
  hash: string;
}

/** The fields the chain covers, in the order audit_entry_canonical() takes them; null where absent. */
export function chainFields(entry: Omit<ChainEntry, 'hash'>): (string | null)[] {
  return [
    entry.prevHash,
    entry.id.toString(),
    entry.at.toISOString(),
    entry.actorKind,
    entry.actor,
    entry.actorTokenId?.toString() ?? null,
    entry.action,
    entry.keyId?.toString() ?? null,
    entry.adminTokenId?.toString() ?? null,
    entry.changes,
  ];
}

export function canonicalEntry(entry: Omit<ChainEntry, 'hash'>): string {
  return chainFields(entry)
    .map((f) => (f === null ? '~\n' : `${Buffer.byteLength(f, 'utf8')}:${f}\n`))
    .join('');
}

export function entryHash(entry: Omit<ChainEntry, 'hash'>): string {
  return createHash('sha256').update(canonicalEntry(entry), 'utf8').digest('hex');
}

/** What a check of the whole chain found. */
export type ChainVerdict =
  | { ok: true; entries: number; head: { id: bigint; hash: string } | null }
  | {
      ok: false;
      entries: number;
      /** The first entry that does not hold: its id. */
      entryId: bigint;
      problem: 'changed' | 'removed' | 'inserted';
      message: string;
    };

/**
 * Walks the entries in id order and names the first that breaks the chain:
 * - inserted: the entry after it follows the entry before it (the chain runs past it), or it
 *   follows the same entry as the one before it;
 * - changed: its fields or hash are not what was appended (its hash does not match them);
 * - removed: it follows an entry that is not there (removed, or replaced by a changed one).
 */
export async function verifyChain(entries: AsyncIterable<ChainEntry>): Promise<ChainVerdict> {
  let expectedPrev = GENESIS_HASH;
  let last: ChainEntry | null = null;
  let count = 0;
  let pending: ChainEntry | null = null;
  const broken = (entryId: bigint, problem: 'changed' | 'removed' | 'inserted', message: string): ChainVerdict => ({
    ok: false,
    entries: count,
    entryId,
    problem,
    message,
  });
  const judge = (entry: ChainEntry, next: ChainEntry | null): ChainVerdict | null => {
    const intact = entryHash(entry) === entry.hash;
    if (intact && entry.prevHash === expectedPrev) return null;
    const after = last === null ? 'the start of the log' : `entry ${last.id}`;
    if (next !== null && next.prevHash === expectedPrev) {
      return broken(
        entry.id,
        'inserted',
        `entry ${entry.id} was inserted out of order: entry ${next.id} follows ${after}`,
      );
    }
    if (intact && last !== null && entry.prevHash === last.prevHash) {
      return broken(
        last.id,
        'inserted',
        `entry ${last.id} was inserted out of order: entry ${entry.id} follows the same entry as it`,
      );
    }
    if (!intact) {
      return broken(entry.id, 'changed', `entry ${entry.id} was changed: its hash does not match its fields`);
    }
    return broken(
      entry.id,
      'removed',
      `entry ${entry.id} does not follow ${after}: an entry between them was removed (or replaced)`,
    );
  };
  for await (const entry of entries) {
    if (pending !== null) {
      const verdict = judge(pending, entry);
      if (verdict) return verdict;
      expectedPrev = pending.hash;
      last = pending;
    }
    pending = entry;
    count += 1;
  }
  if (pending !== null) {
    const verdict = judge(pending, null);
    if (verdict) return verdict;
    last = pending;
  }
  return { ok: true, entries: count, head: last && { id: last.id, hash: last.hash } };
}
