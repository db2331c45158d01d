import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsArray, IsIn, IsInt, IsString, Max, Min, ValidateBy, ValidateIf } from 'class-validator';
import { EXPIRES_AT_FORMAT, MAX_NAME_LENGTH } from '../../api-keys/api-key-input.js';
import { PLANS } from '../../api-keys/plans.js';
import { MAX_CUSTOM_LIMIT } from '../../api-keys/plans.js';
import { SCOPES } from '../../api-keys/scopes.js';
import { parseRfc3339DateTime } from '../../time/rfc3339.js';

/** How long a rolled secret may keep working: at most ten years, in seconds. */
export const MAX_OVERLAP_SECONDS = 3650 * 86_400;
/** The overlap of a roll that does not say. */
export const DEFAULT_OVERLAP_SECONDS = 86_400;

/** An expiry as the key tool's --expires-at reads it: an RFC 3339 date-time with its offset. */
function IsExpiresAt(): PropertyDecorator {
  return ValidateBy({
    name: 'isExpiresAt',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && parseRfc3339DateTime(value) !== null,
      defaultMessage: () => `expiresAt must be ${EXPIRES_AT_FORMAT}, or null`,
    },
  });
}

/**
 * An enterprise key's own limit: an integer from 1 to MAX_CUSTOM_LIMIT. The integer check is
 * applied first, so a fraction is reported as "not an integer" rather than out of range.
 */
function CustomLimit(field: 'perMinute' | 'perDay', description: string): PropertyDecorator {
  const range = `${field} must be from 1 to ${MAX_CUSTOM_LIMIT}`;
  return applyDecorators(
    IsInt({ message: `${field} must be an integer` }),
    Max(MAX_CUSTOM_LIMIT, { message: range }),
    Min(1, { message: range }),
    ValidateIf((o: Record<string, unknown>) => o[field] !== undefined),
    ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_CUSTOM_LIMIT, description }),
  );
}

/**
 * The fields shared by issuing and changing a key. These rules check types and shapes; the rules
 * of what a key may hold (a plan's limits, an expiry in the future) are ApiKeysService's, the same
 * for the key tool.
 */
class KeyFieldsDto {
  @CustomLimit('perMinute', 'Enterprise only: its own requests per minute.')
  perMinute?: number;

  @CustomLimit('perDay', 'Enterprise only: its own requests per UTC day.')
  perDay?: number;

  @ApiPropertyOptional({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'An RFC 3339 date-time with its offset (Z or ±hh:mm): from this instant (in the future, at most 3650 days ahead) the key is refused; null: it does not expire.',
  })
  @ValidateIf((o: KeyFieldsDto) => o.expiresAt !== undefined && o.expiresAt !== null)
  @IsExpiresAt()
  expiresAt?: string | null;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', enum: [...SCOPES] },
    minItems: 1,
    uniqueItems: true,
    description:
      'What the key may do: pets:read (listPets, getPet), pets:write (createPet). Issued keys get both unless told.',
  })
  @ValidateIf((o: KeyFieldsDto) => o.scopes !== undefined)
  @IsArray({ message: `scopes must be an array of ${SCOPES.join(', ')}` })
  @IsString({ each: true, message: `scopes must be an array of ${SCOPES.join(', ')}` })
  scopes?: string[];
}

@ApiSchema({ name: 'NewApiKey' })
export class CreateKeyDto extends KeyFieldsDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_NAME_LENGTH,
    example: 'Acme production',
    description: 'Who the key is for.',
  })
  @IsString({ message: 'name must be a string' })
  name!: string;

  @ApiProperty({
    enum: PLANS,
    enumName: 'Plan',
    description: 'enterprise needs perMinute and perDay; the others take neither.',
  })
  @IsString({ message: 'plan must be a string' })
  @IsIn(PLANS, { message: `plan must be one of ${PLANS.join(', ')}` })
  plan!: string;
}

@ApiSchema({ name: 'ApiKeyChange' })
export class UpdateKeyDto extends KeyFieldsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_NAME_LENGTH, example: 'Acme production' })
  @ValidateIf((o: UpdateKeyDto) => o.name !== undefined)
  @IsString({ message: 'name must be a string' })
  name?: string;

  @ApiPropertyOptional({
    enum: PLANS,
    enumName: 'Plan',
    description: 'Moving to enterprise needs perMinute and perDay; an enterprise key keeps the limits not given.',
  })
  @ValidateIf((o: UpdateKeyDto) => o.plan !== undefined)
  @IsString({ message: 'plan must be a string' })
  @IsIn(PLANS, { message: `plan must be one of ${PLANS.join(', ')}` })
  plan?: string;
}

@ApiSchema({ name: 'ApiKeyRoll' })
export class RollKeyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_OVERLAP_SECONDS,
    default: DEFAULT_OVERLAP_SECONDS,
    description: 'How long the replaced secret keeps working, in seconds; 0: it stops at once.',
  })
  @ValidateIf((o: RollKeyDto) => o.overlapSeconds !== undefined)
  @IsInt({ message: 'overlapSeconds must be an integer' })
  @Min(0, { message: `overlapSeconds must be from 0 to ${MAX_OVERLAP_SECONDS}` })
  @Max(MAX_OVERLAP_SECONDS, { message: `overlapSeconds must be from 0 to ${MAX_OVERLAP_SECONDS}` })
  overlapSeconds?: number;
}
