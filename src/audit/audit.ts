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
  'key.leaked',
  'admin_token.created',
  'admin_token.revoked',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The kinds of actor an entry records (docs/admin-api.md, "Who made a change"). */
export const ACTOR_KINDS = ['admin_token', 'key_tool', 'system'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

/**
 * Who makes a change: an admin token (its id and name), the key tool run by an operating-system
 * user, or the service itself (a name such as `credential-revocation`).
 */
export type Actor =
  | { kind: 'admin_token'; tokenId: bigint; name: string }
  | { kind: 'key_tool'; user: string }
  | { kind: 'system'; name: string };

/**
 * The actor as an operator reads it: an admin token's name, `cli:<user>`, `system:<name>`. An
 * admin token's name never holds a colon (checkAdminTokenName), so the text alone tells the
 * kinds apart too.
 */
export function actorText(actor: Actor): string {
  switch (actor.kind) {
    case 'admin_token':
      return actor.name;
    case 'key_tool':
      return `cli:${actor.user}`;
    case 'system':
      return `system:${actor.name}`;
  }
}

/** A field's value as the audit log keeps it: JSON, instants as ISO 8601 text. */
export type AuditValue = string | number | boolean | null | string[];

/** Each changed field, before and after (before is null for a creation). */
export type AuditChanges = Record<string, { before: AuditValue; after: AuditValue }>;

export interface AuditEntry {
  id: bigint;
  at: Date;
  /** actorText of the actor. */
  actor: string;
  actorKind: ActorKind;
  /** The admin token that made the change (admin_token entries, when known). */
  actorTokenId: bigint | null;
  action: AuditAction;
  keyId: bigint | null;
  adminTokenId: bigint | null;
  changes: AuditChanges;
}

/** What an entry records before it is appended. */
export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at' | 'actor' | 'actorKind' | 'actorTokenId'> & { actor: Actor };

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
