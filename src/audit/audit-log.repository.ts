import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import { PrismaService } from '../database/prisma.service.js';
import type { ChainEntry } from './audit-chain.js';
import {
  actorText,
  type ActorKind,
  type AuditAction,
  type AuditChanges,
  type AuditEntry,
  type NewAuditEntry,
} from './audit.js';

/** An entry of the chain as read, int64 columns as text. */
type ChainRow = Omit<ChainEntry, 'id' | 'actorTokenId' | 'keyId' | 'adminTokenId'> & {
  id: string;
  actorTokenId: string | null;
  keyId: string | null;
  adminTokenId: string | null;
};

/** Prisma, or the transaction a change runs in. */
export type Db = Prisma.TransactionClient;

/** The columns an entry is read with (never its hashes, which only audit verify reads). */
const ENTRY_FIELDS = {
  id: true,
  at: true,
  actor: true,
  actorKind: true,
  actorTokenId: true,
  action: true,
  keyId: true,
  adminTokenId: true,
  changes: true,
} as const;

/**
 * Every statement on audit_log: an append (always inside the transaction of the change it
 * records), the pages read newest first, and the chain read oldest first for audit verify. The
 * table takes entries only through the database's append_audit_entry(), which sets the id, `at`
 * and the hash chain, and refuses UPDATE and DELETE (the migrations' triggers), so there are no
 * others. Prisma and its raw queries: all are rare.
 */
/** What a page of the audit log may be narrowed to: the entries of one actor, action or key. */
export interface AuditFilter {
  actor?: string;
  action?: AuditAction;
  keyId?: bigint;
}

@Injectable()
export class AuditLogRepository {
  constructor(private readonly prisma: PrismaService) {}

  async append(tx: Db, entry: NewAuditEntry): Promise<void> {
    const { actor } = entry;
    await tx.$queryRaw`SELECT "append_audit_entry"(
      ${actor.kind}::text, ${actorText(actor)}::text,
      ${actor.kind === 'admin_token' ? actor.tokenId : null}::bigint, ${entry.action}::text,
      ${entry.keyId}::bigint, ${entry.adminTokenId}::bigint, ${JSON.stringify(entry.changes)}::jsonb
    )::text AS "id"`;
  }

  /** Up to `limit` entries with ids below `before` (all when undefined) that pass `filter`, newest first. */
  async page(limit: number, before?: bigint, filter: AuditFilter = {}): Promise<AuditEntry[]> {
    const rows = await this.prisma.auditEntry.findMany({
      select: ENTRY_FIELDS,
      where: {
        ...(before === undefined ? {} : { id: { lt: before } }),
        ...(filter.actor === undefined ? {} : { actor: filter.actor }),
        ...(filter.action === undefined ? {} : { action: filter.action }),
        ...(filter.keyId === undefined ? {} : { keyId: filter.keyId }),
      },
      orderBy: { id: 'desc' },
      take: limit,
    });
    return rows.map((row) => ({
      ...row,
      actorKind: row.actorKind as ActorKind,
      action: row.action as AuditAction,
      changes: row.changes as AuditChanges,
    }));
  }

  /**
   * Every entry as the hash chain covers it, oldest first, read `batch` at a time. The order is the
   * table's int64 column ("audit_log"."id"), not the text column of the same name the select
   * makes, which would put entry 10 before entry 2.
   */
  async *chain(batch = 1_000): AsyncGenerator<ChainEntry> {
    let after: bigint | null = null; // ids below 1 too: an entry slipped in with id 0 is read
    for (;;) {
      const rows: ChainRow[] = await this.prisma.$queryRaw<
        ChainRow[]
      >`SELECT "id"::text AS "id", "at", "actor_kind" AS "actorKind", "actor", "actor_token_id"::text AS "actorTokenId",
               "action", "key_id"::text AS "keyId", "admin_token_id"::text AS "adminTokenId",
               "changes"::text AS "changes", "prev_hash" AS "prevHash", "hash"
          FROM "audit_log" WHERE ${after}::bigint IS NULL OR "id" > ${after}::bigint ORDER BY "audit_log"."id" LIMIT ${batch}::int`;
      for (const row of rows) {
        const big = (v: string | null) => (v === null ? null : BigInt(v));
        yield {
          ...row,
          id: BigInt(row.id),
          actorTokenId: big(row.actorTokenId),
          keyId: big(row.keyId),
          adminTokenId: big(row.adminTokenId),
        };
      }
      if (rows.length < batch) return;
      after = BigInt(rows[rows.length - 1].id);
    }
  }
}
