import type { INestApplicationContext } from '@nestjs/common';
import { AuditLogRepository } from '../../src/audit/audit-log.repository.js';
import type { AuditEntry } from '../../src/audit/audit.js';
import { ApiKeysService, type ApiKeyInfo } from '../../src/api-keys/api-keys.service.js';

/** The newest audit entries of a running app, newest first. */
export async function auditEntries(app: INestApplicationContext, limit = 50): Promise<AuditEntry[]> {
  return app.get(AuditLogRepository).page(limit);
}

/** A key's record by its id (as text). */
export async function keyInfo(app: INestApplicationContext, id: string): Promise<ApiKeyInfo> {
  const info = await app.get(ApiKeysService).get(BigInt(id));
  if (info === null) throw new Error(`no key ${id}`);
  return info;
}

/** A key of the right shape whose version 1 checksum is wrong: dropped without a lookup. */
export function forgedKey(i: number): string {
  return `ask_${i.toString().padStart(49, 'x')}`;
}
