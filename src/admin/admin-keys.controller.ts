import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyInputError, EXPIRES_AT_FORMAT, type KeyChange } from '../api-keys/api-key-input.js';
import { ApiKeysService, type ApiKeyState } from '../api-keys/api-keys.service.js';
import type { Plan } from '../api-keys/plans.js';
import type { Actor } from '../audit/audit.js';
import { ApiError } from '../errors/api-error.js';
import { AdminErrorResponses } from '../errors/api-responses.decorator.js';
import { JsonBody } from '../http/json-body.interceptor.js';
import { parsePositiveInt64 } from '../json/int64.js';
import { Clock } from '../time/clock.js';
import { parseRfc3339DateTime } from '../time/rfc3339.js';
import { AdminActor } from './admin-auth.guard.js';
import { adminNextLink, adminPage } from './admin-paging.js';
import { ADMIN_BEARER_SCHEME, ADMIN_BASE_PATH } from './admin-paths.js';
import { CreateKeyDto, DEFAULT_OVERLAP_SECONDS, RollKeyDto, UpdateKeyDto } from './dto/key-input.dto.js';
import { IssuedKeyDto, KeyDto, keyJson } from './dto/key.dto.js';
import { KeyListQueryDto } from './dto/key-list-query.dto.js';

export const ID_PARAM = {
  name: 'id',
  description: 'The key’s id (int64).',
  schema: { type: 'string', pattern: '^[1-9][0-9]{0,18}$' },
  example: '7',
} as const;

/** Path parameter id: a decimal int64 from 1 to 2^63-1, else 400 invalid_parameter. */
export function keyId(raw: string): bigint {
  const id = parsePositiveInt64(raw);
  if (id === null) {
    throw new ApiError('invalid_parameter', 'id must be an integer from 1 to 9223372036854775807.', {
      details: [{ field: 'id', message: 'id must be an integer from 1 to 9223372036854775807' }],
    });
  }
  return id;
}

function noSuchKey(id: bigint): ApiError {
  return new ApiError('not_found', `No API key has id ${id}.`);
}

/** The errors of a change to one key with a JSON body (update, roll). */
function KeyChangeErrors(): MethodDecorator & ClassDecorator {
  return AdminErrorResponses(
    { status: 400, codes: ['validation_failed', 'malformed_json', 'invalid_parameter'] },
    404,
    413,
    415,
  );
}

/** What ApiKeysService refuses becomes 400 validation_failed, in its own words (as the key tool prints them). */
async function checked<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiKeyInputError) throw new ApiError('validation_failed', err.message);
    throw err;
  }
}

/** A body's expiresAt (the DTO's IsExpiresAt has checked its form). */
function expiry(raw: string | null | undefined): Date | null | undefined {
  if (raw === undefined || raw === null) return raw;
  const at = parseRfc3339DateTime(raw);
  if (at === null) throw new ApiError('validation_failed', `expiresAt must be ${EXPIRES_AT_FORMAT}, or null.`);
  return at;
}

/**
 * The admin API's door to the key operations: each handler calls one ApiKeysService operation,
 * the key tool's own, with the request's admin token as the actor.
 */
@ApiTags('keys')
@ApiBearerAuth(ADMIN_BEARER_SCHEME)
@AdminErrorResponses(401, 429, 500, 503)
@Controller(`${ADMIN_BASE_PATH}/keys`)
export class AdminKeysController {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly clock: Clock,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    operationId: 'createKey',
    summary: 'Issue an API key',
    description: 'Answers 201 with the key’s record and its secret in `key`, shown this once. Records `key.created`.',
  })
  @ApiResponse({ status: 201, description: 'The key, with its secret.', type: IssuedKeyDto })
  @AdminErrorResponses({ status: 400, codes: ['validation_failed', 'malformed_json'] }, 413, 415)
  @JsonBody()
  async create(@Body() body: CreateKeyDto, @AdminActor() actor: Actor): Promise<IssuedKeyDto> {
    const { info, key } = await checked(() =>
      this.keys.create(
        {
          name: body.name,
          plan: body.plan as Plan, // checked by the service, as the key tool's --plan
          perMinute: body.perMinute,
          perDay: body.perDay,
          expiresAt: expiry(body.expiresAt),
          scopes: body.scopes,
        },
        actor,
      ),
    );
    return { ...keyJson(info, this.clock.now()), key };
  }

  @Get()
  @ApiOperation({
    operationId: 'listKeys',
    summary: 'List API keys',
    description:
      'In id order, revoked keys included, each with its state and last use; never a secret. `search`, `plan` and `state` narrow the list (all given must hold). When more keys follow, the `Link` header carries the next page (rel="next"), with the same filters.',
  })
  @ApiResponse({
    status: 200,
    description: 'A page of keys.',
    type: KeyDto,
    isArray: true,
    headers: {
      Link: { description: 'RFC 8288 link to the next page, when there is one.', schema: { type: 'string' } },
    },
  })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] })
  async list(@Query() query: KeyListQueryDto, @Res({ passthrough: true }) res: Response): Promise<KeyDto[]> {
    const { limit, from } = adminPage(query);
    const { search, plan, state } = query;
    const page = await this.keys.page(limit, from, {
      search,
      plan: plan as Plan | undefined, // checked by KeyListQueryDto
      state: state as ApiKeyState | undefined,
    });
    const link = adminNextLink(`${ADMIN_BASE_PATH}/keys`, limit, page.nextAfter, { search, plan, state });
    if (link !== undefined) res.setHeader('Link', link);
    const now = this.clock.now();
    return page.keys.map((k) => keyJson(k, now));
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getKey',
    summary: 'Show an API key',
    description: 'The key’s record, state and last use; never its secret.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The key.', type: KeyDto })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] }, 404)
  async get(@Param('id') raw: string): Promise<KeyDto> {
    const id = keyId(raw);
    const info = await this.keys.get(id);
    if (!info) throw noSuchKey(id);
    return keyJson(info, this.clock.now());
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateKey',
    summary: 'Change an API key',
    description:
      'Changes the fields given (name, plan, perMinute, perDay, expiresAt, scopes); the others stay. Every instance applies it within 5 s. Records `key.updated` with each changed field; a revoked or expired key takes no change (400 validation_failed).',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The key as changed.', type: KeyDto })
  @KeyChangeErrors()
  @JsonBody()
  async update(@Param('id') raw: string, @Body() body: UpdateKeyDto, @AdminActor() actor: Actor): Promise<KeyDto> {
    const id = keyId(raw);
    const change: KeyChange = {
      name: body.name,
      plan: body.plan,
      perMinute: body.perMinute,
      perDay: body.perDay,
      expiresAt: expiry(body.expiresAt),
      scopes: body.scopes,
    };
    if (Object.values(change).every((v) => v === undefined)) {
      throw new ApiError('validation_failed', 'Give at least one of name, plan, perMinute, perDay, expiresAt, scopes.');
    }
    const info = await checked(() => this.keys.update(id, change, actor));
    if (!info) throw noSuchKey(id);
    return keyJson(info, this.clock.now());
  }

  @Post(':id/roll')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rollKey',
    summary: 'Give an API key a new secret',
    description:
      'The key keeps its id, plan and counters; the new secret is in `key`, shown this once. The replaced secret keeps working for `overlapSeconds` (default 86400). Records `key.rolled`.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The key, with its new secret.', type: IssuedKeyDto })
  @KeyChangeErrors()
  @JsonBody()
  async roll(@Param('id') raw: string, @Body() body: RollKeyDto, @AdminActor() actor: Actor): Promise<IssuedKeyDto> {
    const id = keyId(raw);
    const overlapMs = (body.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS) * 1000;
    const rolled = await checked(() => this.keys.roll(id, overlapMs, actor));
    if (!rolled) throw noSuchKey(id);
    return { ...keyJson(rolled.info, this.clock.now()), key: rolled.key };
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'revokeKey',
    summary: 'Revoke an API key',
    description:
      'Every instance refuses the key within 5 s. Revoking a revoked key changes nothing. Records `key.revoked`.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The key, revoked.', type: KeyDto })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter'] }, 404)
  async revoke(@Param('id') raw: string, @AdminActor() actor: Actor): Promise<KeyDto> {
    const id = keyId(raw);
    const done = await this.keys.revoke(id, actor);
    if (!done) throw noSuchKey(id);
    return keyJson(done.info, this.clock.now());
  }
}
