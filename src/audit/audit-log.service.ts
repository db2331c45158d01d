import { Injectable } from '@nestjs/common';
import { AuditLogRepository } from './audit-log.repository.js';
import type { AuditEntry } from './audit.js';
import { verifyChain, type ChainVerdict } from './audit-chain.js';

/**
 * Reading the audit log: newest first, a page at a time (the admin API's GET /admin/v1/audit);
 * and its hash chain checked from the first entry (the key tool's audit verify).
 */
@Injectable()
export class AuditLogService {
  constructor(private readonly repository: AuditLogRepository) {}

  /** Up to `limit` entries older than entry `before` (the newest when undefined), and whether more follow. */
  async page(limit: number, before?: bigint): Promise<{ entries: AuditEntry[]; nextBefore: bigint | null }> {
    const rows = await this.repository.page(limit + 1, before);
    const entries = rows.slice(0, limit);
    return { entries, nextBefore: rows.length > limit ? entries[entries.length - 1].id : null };
  }

  /** Recomputes the hash chain over every entry and names the first that does not hold. */
  async verify(): Promise<ChainVerdict> {
    return verifyChain(this.repository.chain());
  }
}
