import { ApiProperty, ApiPropertyOptional, ApiSchema, type ApiPropertyOptions } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsOptional, IsString, ValidateIf } from 'class-validator';
import { INT64_MAX } from '../../json/int64.js';
import { MAX_URL_LENGTH } from '../../webhooks/webhook-targets.js';
import { MAX_DESCRIPTION_LENGTH, WEBHOOK_EVENT_TYPES } from '../../webhooks/webhooks.service.js';
import type { DeliveryRow, EndpointRow } from '../../webhooks/webhooks.repository.js';

const INT64 = { type: 'integer', format: 'int64', minimum: 1, maximum: INT64_MAX as unknown as number } as const;
const INSTANT = { type: 'string', format: 'date-time' } as const;
const EVENTS: ApiPropertyOptions = {
  type: 'array',
  items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
  minItems: 1,
  description: 'The event types sent to the endpoint.',
};

/** The body of POST /admin/v1/webhooks. Shapes here; the rules (URL, events) are WebhooksService's. */
@ApiSchema({ name: 'WebhookCreate' })
export class CreateWebhookDto {
  @ApiProperty({ maxLength: MAX_URL_LENGTH, example: 'https://hooks.example.com/animal-store' })
  @IsString({ message: 'url must be a string' })
  url!: string;

  @ApiProperty(EVENTS)
  @IsArray({ message: 'events must be an array of event types' })
  @IsString({ each: true, message: 'events must be an array of event types' })
  events!: string[];

  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: MAX_DESCRIPTION_LENGTH })
  @IsOptional()
  @IsString({ message: 'description must be a string or null' })
  description?: string | null;
}

/** The body of PATCH /admin/v1/webhooks/{id}: the fields given change. */
@ApiSchema({ name: 'WebhookUpdate' })
export class UpdateWebhookDto {
  @ApiPropertyOptional({ maxLength: MAX_URL_LENGTH })
  @ValidateIf((o: UpdateWebhookDto) => o.url !== undefined)
  @IsString({ message: 'url must be a string' })
  url?: string;

  @ApiPropertyOptional(EVENTS)
  @ValidateIf((o: UpdateWebhookDto) => o.events !== undefined)
  @IsArray({ message: 'events must be an array of event types' })
  @IsString({ each: true, message: 'events must be an array of event types' })
  events?: string[];

  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: MAX_DESCRIPTION_LENGTH })
  @IsOptional()
  @IsString({ message: 'description must be a string or null' })
  description?: string | null;

  @ApiPropertyOptional({ description: 'false: nothing is sent to the endpoint until it is enabled again.' })
  @ValidateIf((o: UpdateWebhookDto) => o.enabled !== undefined)
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;
}

/** A webhook endpoint as the admin API shows it: never its secret. */
@ApiSchema({ name: 'Webhook' })
export class WebhookDto {
  @ApiProperty({ ...INT64, example: 3 })
  id!: bigint;

  @ApiProperty({ example: 'https://hooks.example.com/animal-store' })
  url!: string;

  @ApiProperty(EVENTS)
  events!: string[];

  @ApiProperty({ type: 'string', nullable: true })
  description!: string | null;

  @ApiProperty()
  enabled!: boolean;

  @ApiProperty({
    ...INSTANT,
    nullable: true,
    description: 'Until when the secret replaced by the last rotation signs too (null: none does).',
  })
  previousSecretExpiresAt!: string | null;

  @ApiProperty(INSTANT)
  createdAt!: string;

  @ApiProperty(INSTANT)
  updatedAt!: string;
}

/** An endpoint with its signing secret: the answer of a creation or rotation, the one time it is shown. */
@ApiSchema({ name: 'WebhookWithSecret' })
export class WebhookWithSecretDto extends WebhookDto {
  @ApiProperty({
    description: 'The signing secret (`whsec_…`), shown this once.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret!: string;
}

/** One event sent to one endpoint. */
@ApiSchema({ name: 'WebhookDelivery' })
export class WebhookDeliveryDto {
  @ApiProperty({ ...INT64, example: 12 })
  id!: bigint;

  @ApiProperty({ description: 'The `webhook-id` header, the same on every attempt.', example: 'msg_4f1c…' })
  messageId!: string;

  @ApiProperty({ example: 'key.revoked' })
  event!: string;

  @ApiProperty({ enum: ['pending', 'succeeded', 'failed'] })
  state!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  attempts!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The status of the last answer (null: none came).' })
  lastStatus!: number | null;

  @ApiProperty({ type: 'string', nullable: true })
  lastError!: string | null;

  @ApiProperty({ ...INSTANT, nullable: true, description: 'When the next attempt is due (null: none is).' })
  nextAttemptAt!: string | null;

  @ApiProperty(INSTANT)
  createdAt!: string;
}

export function webhookJson(row: EndpointRow): WebhookDto {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    previousSecretExpiresAt: row.previousSecretExpiresAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function deliveryJson(row: DeliveryRow): WebhookDeliveryDto {
  return {
    id: row.id,
    messageId: row.messageId,
    event: row.event,
    state: row.state,
    attempts: row.attempts,
    lastStatus: row.lastStatus,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}
