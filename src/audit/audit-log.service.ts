import { Injectable } from '@nestjs/common';
import { AuditLogRepository, type AuditFilter } from './audit-log.repository.js';
import type { AuditEntry } from './audit.js';
import { verifyChain, type ChainVerdict } from './audit-chain.js';

/**
 * Reading the audit log: newest first, a page at a time, narrowed to an actor, action or key (the
 * admin API's GET /admin/v1/audit, the console);
 * and its hash chain checked from the first entry (the key tool's audit verify).
 */
@Injectable()
export class AuditLogService {
  constructor(private readonly repository: AuditLogRepository) {}

  /**
   * Up to `limit` entries older than entry `before` (the newest when undefined) that pass the
   * filter, and whether more follow.
   */
  async page(
    limit: number,
    before?: bigint,
    filter: AuditFilter = {},
  ): Promise<{ entries: AuditEntry[]; nextBefore: bigint | null }> {
    const rows = await this.repository.page(limit + 1, before, filter);
    const entries = rows.slice(0, limit);
    return { entries, nextBefore: rows.length > limit ? entries[entries.length - 1].id : null };
  }

  /** Recomputes the hash chain over every entry and names the first that does not hold. */
  async verify(): Promise<ChainVerdict> {
    return verifyChain(this.repository.chain());
  }
}
