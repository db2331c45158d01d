import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import {
  ACTOR_KINDS,
  AUDIT_ACTIONS,
  type ActorKind,
  type AuditAction,
  type AuditChanges,
  type AuditEntry,
} from '../../audit/audit.js';
import { INT64_MAX } from '../../json/int64.js';

const INT64 = { type: 'integer', format: 'int64', minimum: 1, maximum: INT64_MAX as unknown as number } as const;

/** One entry of the audit log. */
@ApiSchema({ name: 'AuditEntry' })
export class AuditEntryDto {
  @ApiProperty({ ...INT64, example: 42 })
  id!: bigint;

  @ApiProperty({ type: 'string', format: 'date-time' })
  at!: string;

  @ApiProperty({
    description:
      'Who made the change, as an operator reads it: the admin token’s name, `cli:<operating-system user>` for the key tool, or `system:<name>` for the service itself.',
    example: 'cli:alice',
  })
  actor!: string;

  @ApiProperty({
    enum: ACTOR_KINDS,
    enumName: 'ActorKind',
    description:
      'The kind of actor: `admin_token` (a request with an admin token, `actorTokenId`), `key_tool` (the key tool, run by the operating-system user that `actor` names after `cli:`) or `system` (the service itself, named after `system:`).',
    example: 'key_tool',
  })
  actorKind!: ActorKind;

  @ApiPropertyOptional({
    ...INT64,
    description:
      'The admin token that made the change (`admin_token` entries; absent on entries recorded before actor kinds whose token was not found by name).',
  })
  actorTokenId?: bigint;

  @ApiProperty({ enum: AUDIT_ACTIONS, enumName: 'AuditAction' })
  action!: AuditAction;

  @ApiPropertyOptional({ ...INT64, description: 'The API key changed (key.* actions).' })
  keyId?: bigint;

  @ApiPropertyOptional({ ...INT64, description: 'The admin token issued or revoked (admin_token.* actions).' })
  adminTokenId?: bigint;

  @ApiProperty({
    type: 'object',
    description:
      'Each changed field with its value before and after (before is null on creation); never a secret or a hash.',
    additionalProperties: {
      type: 'object',
      required: ['before', 'after'],
      properties: {
        before: { description: 'The value before the change (any JSON value; null on creation).' },
        after: { description: 'The value after the change (any JSON value).' },
      },
    },
    example: { plan: { before: 'free', after: 'pro' } },
  })
  changes!: AuditChanges;
}

export function auditEntryJson(entry: AuditEntry): AuditEntryDto {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    actor: entry.actor,
    actorKind: entry.actorKind,
    ...(entry.actorTokenId === null ? {} : { actorTokenId: entry.actorTokenId }),
    action: entry.action,
    ...(entry.keyId === null ? {} : { keyId: entry.keyId }),
    ...(entry.adminTokenId === null ? {} : { adminTokenId: entry.adminTokenId }),
    changes: entry.changes,
  };
}
