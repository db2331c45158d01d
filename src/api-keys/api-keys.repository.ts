import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import type { PreparedStatement } from '../database/database.js';
import { PrismaService } from '../database/prisma.service.js';
import { WRITE_TRANSACTION } from '../database/transactions.js';
import type { Db } from '../audit/audit-log.repository.js';
import type { Plan } from './plans.js';

/** The row findByHash reads. */
export interface FoundKeyRow {
  id: number | bigint;
  hash: string;
  previousHash: string | null;
  previousExpiresAt: Date | null;
  plan: Plan;
  perMinute: number | null;
  perDay: number | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
  scopes: string[];
}
const FOUND_KEY_COLUMNS =
  '"id", "hash", "previous_hash" AS "previousHash", "previous_expires_at" AS "previousExpiresAt", "plan"::text AS "plan", ' +
  '"per_minute" AS "perMinute", "per_day" AS "perDay", "last_used_at" AS "lastUsedAt", "revoked_at" AS "revokedAt", "expires_at" AS "expiresAt", "scopes"';
const FIND_BY_HASH: PreparedStatement = {
  name: 'api_keys_find_by_hash',
  text: `SELECT ${FOUND_KEY_COLUMNS} FROM "api_keys" WHERE "hash" = $1 OR "previous_hash" = $1 LIMIT 1`,
};

/** The unrevoked keys last used after $1, the most recently used first, at most $2 of them. */
const USED_SINCE: PreparedStatement = {
  name: 'api_keys_used_since',
  text:
    `SELECT ${FOUND_KEY_COLUMNS} FROM "api_keys" WHERE "last_used_at" > $1::timestamptz AND "revoked_at" IS NULL ` +
    'ORDER BY "last_used_at" DESC LIMIT $2',
};

const TOUCH: PreparedStatement = {
  name: 'api_keys_touch',
  text: 'UPDATE "api_keys" SET "last_used_at" = $2 WHERE "id" = $1',
};

/**
 * The hashes of the keys changed after $1, with the database's clock. The left join keeps one
 * row (of nulls) when nothing changed, so the clock always comes back.
 */
const CHANGES_SINCE: PreparedStatement = {
  name: 'api_keys_changes_since',
  text:
    'SELECT statement_timestamp() AS "now", "hash", "previous_hash" AS "previousHash", "changed_at" AS "changedAt" ' +
    'FROM (SELECT 1) AS "poll" LEFT JOIN "api_keys" ON "changed_at" > $1::timestamptz',
};
interface ChangeRow {
  now: Date;
  hash: string | null;
  previousHash: string | null;
  changedAt: Date | null;
}

const INFO_FIELDS = {
  id: true,
  name: true,
  plan: true,
  perMinute: true,
  perDay: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
  expiresAt: true,
  previousExpiresAt: true,
  scopes: true,
  leakedAt: true,
} as const;

export type InfoRow = {
  id: bigint;
  name: string;
  plan: Plan;
  perMinute: number | null;
  perDay: number | null;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
  previousExpiresAt: Date | null;
  scopes: string[];
  leakedAt: Date | null;
};

/** A key one of whose secrets has a hash asked for (findSecretsByHashes). */
export interface SecretsRow {
  id: bigint;
  hash: string;
  previousHash: string | null;
}

/** The fields of a key an operator changes (ApiKeysService.update). */
export interface ApiKeyFields {
  name?: string;
  plan?: Plan;
  perMinute?: number | null;
  perDay?: number | null;
  expiresAt?: Date | null;
  scopes?: string[];
}

/** What a list of keys may be narrowed to (ApiKeysService.page). */
export interface KeyFilter {
  /** A part of the name (any case), or the first characters of a key. */
  search?: string;
  plan?: Plan;
  state?: 'active' | 'expiring' | 'expired' | 'revoked';
  /** The instant the state is taken at. */
  now: Date;
  /** A key expiring within this long of `now` is `expiring`. */
  expiringWithinMs: number;
}

/** Lengths of the prefix kept of a key (version 1 and 2): a longer search is cut to them. */
const PREFIX_LENGTHS = [12, 13];

/** The conditions of a filter, as Prisma takes them. */
function filterWhere(filter: KeyFilter): Prisma.ApiKeyWhereInput[] {
  const where: Prisma.ApiKeyWhereInput[] = [];
  if (filter.plan !== undefined) where.push({ plan: filter.plan });
  const soon = new Date(filter.now.getTime() + filter.expiringWithinMs);
  switch (filter.state) {
    case 'revoked':
      where.push({ revokedAt: { not: null } });
      break;
    case 'expired':
      where.push({ revokedAt: null, expiresAt: { lte: filter.now } });
      break;
    case 'expiring':
      where.push({ revokedAt: null, expiresAt: { gt: filter.now, lte: soon } });
      break;
    case 'active':
      where.push({ revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: soon } }] });
      break;
  }
  const search = filter.search;
  if (search !== undefined) {
    // Prisma passes the text to LIKE as it is: its wildcards (and the escape) are escaped here.
    const literal = search.replace(/[\\%_]/g, '\\$&');
    where.push({
      OR: [
        { name: { contains: literal, mode: 'insensitive' } },
        { prefix: { startsWith: literal } },
        { prefix: { in: PREFIX_LENGTHS.map((n) => search.slice(0, n)) } },
      ],
    });
  }
  return where;
}

/** A key's row as listed, with the hashes of its current and previous secret. */
export type InfoRowWithHashes = InfoRow & { hash: string; previousHash: string | null };

/** A key whose view for authentication changed (changed_at): its current and previous secret's hashes. */
export interface ApiKeyChange {
  hashes: string[];
  changedAt: Date;
}

/**
 * Every statement on api_keys. The lookup authentication makes, the touch of a key in use and
 * the poll of changed keys run on a request's path or every few seconds: prepared statements on
 * the driver (Database.query). The key tool's operations go through Prisma (why each,
 * ARCHITECTURE.md, "Data access").
 */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Runs `work` in one write transaction: a change and its audit entry commit together or not
   * at all.
   */
  async transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work, WRITE_TRANSACTION);
  }

  async insert(data: Prisma.ApiKeyCreateInput, db: Db = this.prisma): Promise<InfoRow> {
    return db.apiKey.create({ data, select: INFO_FIELDS });
  }

  /** Gives the key a new secret, provided its current secret is still `currentHash`. */
  async replaceSecret(
    id: bigint,
    currentHash: string,
    data: Prisma.ApiKeyUpdateInput,
    db: Db = this.prisma,
  ): Promise<InfoRow> {
    return db.apiKey.update({ where: { id, hash: currentHash }, data, select: INFO_FIELDS });
  }

  /** Every key, revoked ones included, in order of creation. */
  async list(): Promise<InfoRow[]> {
    return this.prisma.apiKey.findMany({
      select: INFO_FIELDS,
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  /** Up to `limit` keys with ids above `after` that pass `filter`, in id order. */
  async page(limit: number, after?: bigint, filter?: KeyFilter): Promise<InfoRow[]> {
    const where: Prisma.ApiKeyWhereInput[] = [];
    if (after !== undefined) where.push({ id: { gt: after } });
    if (filter !== undefined) where.push(...filterWhere(filter));
    return this.prisma.apiKey.findMany({
      select: INFO_FIELDS,
      where: { AND: where },
      orderBy: { id: 'asc' },
      take: limit,
    });
  }

  async count(): Promise<number> {
    return this.prisma.apiKey.count();
  }

  /**
   * How many keys are in each state at `now`, in one statement (one snapshot). Each count but
   * `active` reads an index only: the revoked keys', and the expiry dates of the keys not revoked
   * (partial indexes, so their size follows the few keys in those states); all keys are counted
   * from the primary key, and `active` is what the others leave.
   */
  async countByState(
    now: Date,
    expiringWithinMs: number,
  ): Promise<Record<'active' | 'expiring' | 'expired' | 'revoked', number>> {
    const soon = new Date(now.getTime() + expiringWithinMs);
    const [row] = await this.prisma.$queryRaw<{ all: bigint; revoked: bigint; expired: bigint; expiring: bigint }[]>`
      SELECT (SELECT count(*) FROM "api_keys") AS "all",
             (SELECT count(*) FROM "api_keys" WHERE "revoked_at" IS NOT NULL) AS "revoked",
             (SELECT count(*) FROM "api_keys"
               WHERE "revoked_at" IS NULL AND "expires_at" <= ${now}::timestamptz) AS "expired",
             (SELECT count(*) FROM "api_keys"
               WHERE "revoked_at" IS NULL AND "expires_at" > ${now}::timestamptz
                 AND "expires_at" <= ${soon}::timestamptz) AS "expiring"`;
    const [all, revoked, expired, expiring] = [row.all, row.revoked, row.expired, row.expiring].map(Number);
    return { active: all - revoked - expired - expiring, expiring, expired, revoked };
  }

  /** The names of the keys with these ids (ids without a key are absent). */
  async namesOf(ids: readonly bigint[]): Promise<Map<bigint, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.prisma.apiKey.findMany({
      where: { id: { in: [...ids] } },
      select: { id: true, name: true },
    });
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  /**
   * Records the expiry notices due at `now` (7d: the key expires within 7 days, 1d: within one)
   * of live keys, each once whoever records it first; the notices recorded by this call.
   */
  async recordExpiryNotices(now: Date, db: Db): Promise<{ keyId: bigint; notice: '7d' | '1d' }[]> {
    return db.$queryRaw<{ keyId: bigint; notice: '7d' | '1d' }[]>`
      INSERT INTO "key_expiry_notices" ("key_id", "notice")
      SELECT "api_keys"."id", "due"."notice"
        FROM "api_keys"
        JOIN (VALUES ('7d', interval '7 days'), ('1d', interval '1 day')) AS "due" ("notice", "within")
          ON "api_keys"."expires_at" <= ${now}::timestamptz + "due"."within"
       WHERE "api_keys"."revoked_at" IS NULL AND "api_keys"."expires_at" > ${now}::timestamptz
      ON CONFLICT DO NOTHING
      RETURNING "key_id" AS "keyId", "notice"`;
  }

  async findInfo(id: bigint, db: Db = this.prisma): Promise<InfoRow | null> {
    return db.apiKey.findUnique({ where: { id }, select: INFO_FIELDS });
  }

  /**
   * The key's row with the hashes of its secrets, locked (FOR UPDATE) until the transaction
   * `db` ends, so two changes of one key apply one after the other and each audit entry's
   * "before" is what the change replaced.
   */
  async lockInfoWithHashes(id: bigint, db: Db): Promise<InfoRowWithHashes | null> {
    const locked = await db.$queryRaw<{ id: bigint }[]>`SELECT "id" FROM "api_keys" WHERE "id" = ${id} FOR UPDATE`;
    if (locked.length === 0) return null;
    return db.apiKey.findUnique({
      where: { id },
      select: { ...INFO_FIELDS, hash: true, previousHash: true },
    });
  }

  /** Revokes the key at `at` unless it is revoked already; whether it did. */
  async revoke(id: bigint, at: Date, db: Db = this.prisma): Promise<boolean> {
    const { count } = await db.apiKey.updateMany({
      where: { id, revokedAt: null },
      data: { revokedAt: at },
    });
    return count === 1;
  }

  /** The keys whose current or previous secret has one of these hashes, in one statement. */
  async findSecretsByHashes(hashes: string[]): Promise<SecretsRow[]> {
    if (hashes.length === 0) return [];
    return this.prisma.apiKey.findMany({
      select: { id: true, hash: true, previousHash: true },
      where: { OR: [{ hash: { in: hashes } }, { previousHash: { in: hashes } }] },
    });
  }

  /** Records a reported leak at `at`, and revokes the key at the same instant when `revoke`. */
  async recordLeak(id: bigint, at: Date, revoke: boolean, db: Db = this.prisma): Promise<void> {
    await db.apiKey.update({ where: { id }, data: revoke ? { leakedAt: at, revokedAt: at } : { leakedAt: at } });
  }

  /** Sets what a change of the key gives (name, plan and limits, expiry). */
  async update(id: bigint, data: ApiKeyFields, db: Db = this.prisma): Promise<InfoRowWithHashes> {
    return db.apiKey.update({
      where: { id },
      data,
      select: { ...INFO_FIELDS, hash: true, previousHash: true },
    });
  }

  /** The key whose current or previous secret has this hash, or undefined. */
  async findByHash(hash: string): Promise<FoundKeyRow | undefined> {
    const [row] = await this.prisma.database.query<FoundKeyRow>(FIND_BY_HASH, [hash]);
    return row;
  }

  /** The unrevoked keys last used after `since`, the most recently used first, at most `limit`. */
  async usedSince(since: Date, limit: number): Promise<FoundKeyRow[]> {
    return this.prisma.database.query<FoundKeyRow>(USED_SINCE, [since, limit]);
  }

  /** Sets the key's last_used_at. */
  async touch(id: bigint, at: Date): Promise<void> {
    await this.prisma.database.query(TOUCH, [id, at]);
  }

  /**
   * The keys changed after `since` and the database's clock at the time of the query. `since`
   * null: no keys, only the clock.
   */
  async changesSince(since: Date | null): Promise<{ now: Date; changes: ApiKeyChange[] }> {
    const rows = await this.prisma.database.query<ChangeRow>(CHANGES_SINCE, [since ?? 'infinity']);
    const changes: ApiKeyChange[] = [];
    for (const row of rows) {
      if (row.hash === null || row.changedAt === null) continue;
      changes.push({
        hashes: row.previousHash === null ? [row.hash] : [row.hash, row.previousHash],
        changedAt: row.changedAt,
      });
    }
    return { now: rows[0].now, changes };
  }
}
