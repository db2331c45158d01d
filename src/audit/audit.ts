/**
 * The audit log's vocabulary (docs/admin-api.md, "The audit log"): who changed what, in the
 * terms an operator reads. The entries are appended by ApiKeysService and AdminTokensService in
 * the transaction of each change.
 */
export const AUDIT_ACTIONS = [
  'key.created',
  'key.updated',
  'key.rolled',
  'key.revoked',
  'admin_token.created',
  'admin_token.revoked',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who made a change: an admin token's name, or `cli:<operating-system user>` for the key tool. */
export type Actor = string;

/** A field's value as the audit log keeps it: JSON, instants as ISO 8601 text. */
export type AuditValue = string | number | boolean | null | string[];

/** Each changed field, before and after (before is null for a creation). */
export type AuditChanges = Record<string, { before: AuditValue; after: AuditValue }>;

export interface AuditEntry {
  id: bigint;
  at: Date;
  actor: Actor;
  action: AuditAction;
  keyId: bigint | null;
  adminTokenId: bigint | null;
  changes: AuditChanges;
}

/** What an entry records before it is appended. */
export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'>;

/** The fields whose values differ between two snapshots, each before and after. */
export function changedFields(
  before: Record<string, AuditValue> | null,
  after: Record<string, AuditValue>,
): AuditChanges {
  const changes: AuditChanges = {};
  for (const [field, value] of Object.entries(after)) {
    const old = before === null ? null : (before[field] ?? null);
    if (JSON.stringify(old) !== JSON.stringify(value)) changes[field] = { before: old, after: value };
  }
  return changes;
}

/** An instant as the audit log keeps it. */
export function instant(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
