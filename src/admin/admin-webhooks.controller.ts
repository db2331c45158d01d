import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../audit/audit.js';
import { ApiError } from '../errors/api-error.js';
import { AdminErrorResponses } from '../errors/api-responses.decorator.js';
import { JsonBody } from '../http/json-body.interceptor.js';
import { parsePositiveInt64 } from '../json/int64.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { AdminActor } from './admin-auth.guard.js';
import { adminNextLink, adminPage } from './admin-paging.js';
import { ADMIN_BASE_PATH, ADMIN_BEARER_SCHEME } from './admin-paths.js';
import { AdminListQueryDto } from './dto/list-query.dto.js';
import {
  CreateWebhookDto,
  deliveryJson,
  UpdateWebhookDto,
  WebhookDeliveryDto,
  WebhookDto,
  webhookJson,
  WebhookWithSecretDto,
} from './dto/webhook.dto.js';

const INT64_PATTERN = '^[1-9][0-9]{0,18}$';
const ID_PARAM = {
  name: 'id',
  description: 'The endpoint’s id (int64).',
  schema: { type: 'string', pattern: INT64_PATTERN },
} as const;
const DELIVERY_PARAM = {
  name: 'deliveryId',
  description: 'The delivery’s id (int64).',
  schema: { type: 'string', pattern: INT64_PATTERN },
} as const;

/** A path parameter: a decimal int64 from 1 to 2^63-1, else 400 invalid_parameter. */
function int64Param(raw: string, field: string): bigint {
  const id = parsePositiveInt64(raw);
  if (id === null) {
    const message = `${field} must be an integer from 1 to 9223372036854775807`;
    throw new ApiError('invalid_parameter', `${message}.`, { details: [{ field, message }] });
  }
  return id;
}

/** The errors of a change with a JSON body. */
function ChangeErrors(): MethodDecorator & ClassDecorator {
  return AdminErrorResponses(
    { status: 400, codes: ['validation_failed', 'malformed_json', 'invalid_parameter'] },
    404,
    413,
    415,
  );
}

/**
 * Webhook endpoints and their deliveries (docs/webhooks.md): each handler calls one
 * WebhooksService operation, with the request's admin token as the actor of changes.
 */
@ApiTags('webhooks')
@ApiBearerAuth(ADMIN_BEARER_SCHEME)
@AdminErrorResponses(401, 429, 500, 501, 503)
@Controller(`${ADMIN_BASE_PATH}/webhooks`)
export class AdminWebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Add a webhook endpoint',
    description:
      'Answers 201 with the endpoint and its signing secret in `secret`, shown this once. In production a URL resolving to a loopback, private, link-local or metadata address is refused (400) unless WEBHOOK_ALLOW_PRIVATE_TARGETS=true. Records `webhook.created`.',
  })
  @ApiResponse({ status: 201, description: 'The endpoint, with its secret.', type: WebhookWithSecretDto })
  @AdminErrorResponses({ status: 400, codes: ['validation_failed', 'malformed_json'] }, 413, 415)
  @JsonBody()
  async create(@Body() body: CreateWebhookDto, @AdminActor() actor: Actor): Promise<WebhookWithSecretDto> {
    const { endpoint, secret } = await this.webhooks.create(
      { url: body.url, events: body.events, description: body.description },
      actor,
    );
    return { ...webhookJson(endpoint), secret };
  }

  @Get()
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: 'List webhook endpoints',
    description: 'In id order; never a secret.',
  })
  @ApiResponse({ status: 200, description: 'The endpoints.', type: WebhookDto, isArray: true })
  async list(): Promise<WebhookDto[]> {
    return (await this.webhooks.list()).map(webhookJson);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getWebhook', summary: 'Show a webhook endpoint', description: 'Never its secret.' })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The endpoint.', type: WebhookDto })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] }, 404)
  async get(@Param('id') raw: string): Promise<WebhookDto> {
    return webhookJson(await this.webhooks.get(int64Param(raw, 'id')));
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateWebhook',
    summary: 'Change a webhook endpoint',
    description:
      'Changes the fields given (url, events, description, enabled); the others stay. Records `webhook.updated` with each changed field.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The endpoint as changed.', type: WebhookDto })
  @ChangeErrors()
  @JsonBody()
  async update(
    @Param('id') raw: string,
    @Body() body: UpdateWebhookDto,
    @AdminActor() actor: Actor,
  ): Promise<WebhookDto> {
    const id = int64Param(raw, 'id');
    const { url, events, description, enabled } = body;
    if ([url, events, description, enabled].every((v) => v === undefined)) {
      throw new ApiError('validation_failed', 'Give at least one of url, events, description, enabled.');
    }
    return webhookJson(await this.webhooks.update(id, { url, events, description, enabled }, actor));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook endpoint',
    description: 'The endpoint and its deliveries are deleted; nothing more is sent to it. Records `webhook.deleted`.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 204, description: 'Deleted.' })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter'] }, 404)
  async delete(@Param('id') raw: string, @AdminActor() actor: Actor): Promise<void> {
    await this.webhooks.delete(int64Param(raw, 'id'), actor);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: 'Give a webhook endpoint a new signing secret',
    description:
      'The new secret is in `secret`, shown this once. For 24 hours deliveries carry two signatures, one per secret, so the receiver can move without a gap. Records `webhook.secret_rotated`.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The endpoint, with its new secret.', type: WebhookWithSecretDto })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter'] }, 404)
  async rotate(@Param('id') raw: string, @AdminActor() actor: Actor): Promise<WebhookWithSecretDto> {
    const { endpoint, secret } = await this.webhooks.rotateSecret(int64Param(raw, 'id'), actor);
    return { ...webhookJson(endpoint), secret };
  }

  @Post(':id/test')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'testWebhook',
    summary: 'Send a test event',
    description: 'Sends a `webhook.test` event to the endpoint; answers 202 with its delivery, pending.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 202, description: 'The delivery.', type: WebhookDeliveryDto })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter'] }, 404)
  async test(@Param('id') raw: string): Promise<WebhookDeliveryDto> {
    return deliveryJson(await this.webhooks.sendTest(int64Param(raw, 'id')));
  }

  @Get(':id/deliveries')
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: 'List an endpoint’s deliveries',
    description:
      'Newest first: each event sent, its state (pending, succeeded, failed), attempts, last status and error, and next attempt. When older deliveries follow, the `Link` header carries the next page (rel="next").',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({
    status: 200,
    description: 'A page of deliveries.',
    type: WebhookDeliveryDto,
    isArray: true,
    headers: {
      Link: { description: 'RFC 8288 link to the next page, when there is one.', schema: { type: 'string' } },
    },
  })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] }, 404)
  async deliveries(
    @Param('id') raw: string,
    @Query() query: AdminListQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<WebhookDeliveryDto[]> {
    const id = int64Param(raw, 'id');
    const { limit, from } = adminPage(query);
    const page = await this.webhooks.deliveries(id, limit, from);
    const link = adminNextLink(`${ADMIN_BASE_PATH}/webhooks/${id}/deliveries`, limit, page.nextBefore);
    if (link !== undefined) res.setHeader('Link', link);
    return page.deliveries.map(deliveryJson);
  }

  @Post(':id/deliveries/:deliveryId/retry')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'retryWebhookDelivery',
    summary: 'Try a failed delivery again',
    description:
      'The delivery goes back to pending and one more attempt is made at once, with the same `webhook-id`. Only a failed delivery is retried (else 400 validation_failed).',
  })
  @ApiParam(ID_PARAM)
  @ApiParam(DELIVERY_PARAM)
  @ApiResponse({ status: 202, description: 'The delivery, pending.', type: WebhookDeliveryDto })
  @AdminErrorResponses({ status: 400, codes: ['validation_failed', 'invalid_parameter'] }, 404)
  async retry(@Param('id') raw: string, @Param('deliveryId') rawDelivery: string): Promise<WebhookDeliveryDto> {
    const id = int64Param(raw, 'id');
    const deliveryId = int64Param(rawDelivery, 'deliveryId');
    return deliveryJson(await this.webhooks.retry(id, deliveryId));
  }
}
