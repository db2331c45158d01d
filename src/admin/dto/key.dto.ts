import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PLANS, type Plan } from '../../api-keys/plans.js';
import { keyRecord, type ApiKeyInfo, type ApiKeyState } from '../../api-keys/api-keys.service.js';
import { INT64_MAX } from '../../json/int64.js';
import { SCOPES } from '../../api-keys/scopes.js';

export const KEY_STATES: ApiKeyState[] = ['active', 'expiring', 'expired', 'revoked'];

const INT64 = { type: 'integer', format: 'int64', minimum: 1, maximum: INT64_MAX as unknown as number } as const;
const INSTANT = { type: 'string', format: 'date-time' } as const;

/** An API key as the admin API shows it: never the secret, never its hash. */
@ApiSchema({ name: 'ApiKey' })
export class KeyDto {
  @ApiProperty({ ...INT64, example: 7 })
  id!: bigint;

  @ApiProperty({ minLength: 1, maxLength: 100, example: 'Acme production' })
  name!: string;

  @ApiProperty({ enum: PLANS, enumName: 'Plan' })
  plan!: Plan;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'Requests per minute in force (the plan’s, or the key’s own on enterprise).',
  })
  perMinute!: number;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Requests per UTC day in force.' })
  perDay!: number;

  @ApiProperty({
    description: 'The first characters of the secret, to recognise it (not enough to use it).',
    example: 'ask2_3fQk9ZpA',
  })
  prefix!: string;

  @ApiProperty({ ...INSTANT })
  createdAt!: string;

  @ApiProperty({
    ...INSTANT,
    nullable: true,
    description: 'Last use, recorded at most once a minute; null: never used.',
  })
  lastUsedAt!: string | null;

  @ApiProperty({ ...INSTANT, nullable: true })
  revokedAt!: string | null;

  @ApiProperty({
    ...INSTANT,
    nullable: true,
    description: 'From this instant the key is refused; null: it does not expire.',
  })
  expiresAt!: string | null;

  @ApiProperty({
    ...INSTANT,
    nullable: true,
    description: 'Until when the secret replaced by the last roll still works.',
  })
  previousSecretExpiresAt!: string | null;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...SCOPES] },
    description: 'What the key may do: pets:read (listPets, getPet), pets:write (createPet).',
  })
  scopes!: string[];

  @ApiProperty({
    ...INSTANT,
    nullable: true,
    description:
      'When a leak of the key was first reported (POST /v1/credentials/revoke or GitHub secret scanning); null: none was. A leaked key is revoked then, unless the service runs with LEAKED_KEY_ACTION=notify.',
  })
  leakedAt!: string | null;

  @ApiProperty({
    enum: KEY_STATES,
    enumName: 'ApiKeyState',
    description: 'active; expiring (within 7 days); expired; revoked.',
  })
  state!: ApiKeyState;
}

/** A key just issued or rolled, with its secret: shown this once. */
@ApiSchema({ name: 'IssuedApiKey' })
export class IssuedKeyDto extends KeyDto {
  @ApiProperty({ description: 'The secret, shown only in this response: store it safely.', example: 'ask2_…' })
  key!: string;
}

export function keyJson(info: ApiKeyInfo, now: Date): KeyDto {
  return keyRecord(info, now);
}
