import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import { PrismaService } from '../database/prisma.service.js';
import type { AuditAction, AuditChanges, AuditEntry, NewAuditEntry } from './audit.js';

/** Prisma, or the transaction a change runs in. */
export type Db = Prisma.TransactionClient;

/**
 * Every statement on audit_log: an append (always inside the transaction of the change it
 * records) and the pages read newest first. The table refuses UPDATE and DELETE itself (the
 * migration's trigger), so there are no others. Prisma: both are rare.
 */
@Injectable()
export class AuditLogRepository {
  constructor(private readonly prisma: PrismaService) {}

  async append(tx: Db, entry: NewAuditEntry): Promise<void> {
    await tx.auditEntry.create({
      data: {
        actor: entry.actor,
        action: entry.action,
        keyId: entry.keyId,
        adminTokenId: entry.adminTokenId,
        changes: entry.changes as Prisma.InputJsonObject,
      },
      select: { id: true },
    });
  }

  /** Up to `limit` entries with ids below `before` (all when undefined), newest first. */
  async page(limit: number, before?: bigint): Promise<AuditEntry[]> {
    const rows = await this.prisma.auditEntry.findMany({
      where: before === undefined ? {} : { id: { lt: before } },
      orderBy: { id: 'desc' },
      take: limit,
    });
    return rows.map((row) => ({
      ...row,
      action: row.action as AuditAction,
      changes: row.changes as AuditChanges,
    }));
  }
}
