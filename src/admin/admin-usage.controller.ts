import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, type ValidationArguments } from 'class-validator';
import { ApiError } from '../errors/api-error.js';
import { AdminErrorResponses } from '../errors/api-responses.decorator.js';
import { PureQuery } from '../http/api-validation.pipe.js';
import { USAGE_OPERATIONS, type UsageOperation } from '../usage/usage-counts.js';
import { GRANULARITIES, parseUsageQuery, UsageQueryError } from '../usage/usage-query.js';
import { DEFAULT_TOP_KEYS, MAX_TOP_KEYS, UsageService } from '../usage/usage.service.js';
import { ID_PARAM, keyId } from './admin-keys.controller.js';
import { ADMIN_BEARER_SCHEME, ADMIN_BASE_PATH } from './admin-paths.js';

/** The message of a required query parameter that is missing, or given more than once (an array). */
function requiredOnce(name: string) {
  return {
    message: ({ value }: ValidationArguments) =>
      value === undefined ? `${name} is required` : `${name} must be given once`,
  };
}

/** Query of a key's usage: the range (both ends required) and the period size, each at most once. */
@PureQuery()
export class UsageQueryDto {
  @ApiProperty({
    description: 'Start: an ISO 8601 date (UTC midnight) or an instant with its offset.',
    example: '2026-11-01',
  })
  @IsString(requiredOnce('from'))
  from!: string;

  @ApiProperty({ description: 'End (exclusive), as `from`.', example: '2026-12-01' })
  @IsString(requiredOnce('to'))
  to!: string;

  @ApiProperty({ required: false, enum: GRANULARITIES, default: 'hour', description: 'The size of a period.' })
  @IsOptional()
  @IsString({ message: 'granularity must be given once' })
  granularity?: string;
}

/** Query of a key's usage: the range, the period size and the split. */
@PureQuery()
export class KeyUsageQueryDto extends UsageQueryDto {
  @ApiProperty({
    required: false,
    enum: ['operation'],
    description: 'operation: one row per period and operation (`listPets`, `createPet`, `getPet`, `other`).',
  })
  @IsOptional()
  @IsString({ message: 'by must be given once' })
  @IsIn(['operation'], { message: 'by must be operation' })
  by?: string;
}

/** Query of the busiest keys: the range (at most 1000 hours) and how many. */
@PureQuery()
export class TopKeysQueryDto {
  @ApiProperty({
    description: 'Start: an ISO 8601 date (UTC midnight) or an instant with its offset.',
    example: '2026-11-20',
  })
  @IsString(requiredOnce('from'))
  from!: string;

  @ApiProperty({ description: 'End (exclusive), as `from`; at most 1000 hours after it.', example: '2026-11-27' })
  @IsString(requiredOnce('to'))
  to!: string;

  @ApiProperty({
    required: false,
    type: 'integer',
    minimum: 1,
    maximum: MAX_TOP_KEYS,
    default: DEFAULT_TOP_KEYS,
    description: 'How many keys.',
  })
  @IsOptional()
  @IsString({ message: 'limit must be given once' })
  @Matches(/^(?:100|[1-9][0-9]?)$/, { message: `limit must be an integer from 1 to ${MAX_TOP_KEYS}` })
  limit?: string;
}

class UsagePeriodDto {
  @ApiProperty({ format: 'date-time', description: 'The start of the UTC hour or day.' })
  period!: string;

  @ApiProperty({ type: 'integer', description: 'Requests counted against the key’s rate limits.' })
  requests!: number;

  @ApiProperty({ type: 'integer', description: 'Of those, the ones answered 429.' })
  limited!: number;

  @ApiProperty({
    required: false,
    enum: USAGE_OPERATIONS,
    description:
      'With `by=operation`: the operation (`other`: a /v1 path no operation answers, or usage recorded before operations were).',
  })
  operation?: UsageOperation;
}

class KeyUsageTotalDto {
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, example: 7 })
  keyId!: bigint;

  @ApiProperty({ description: 'The key’s name.', example: 'Acme production' })
  name!: string;

  @ApiProperty({ type: 'integer', description: 'Requests counted against the key in the range.' })
  requests!: number;

  @ApiProperty({ type: 'integer', description: 'Of those, the ones answered 429.' })
  limited!: number;
}

/** A usage query's refusal as the Error body: 400 invalid_parameter naming the parameter. */
async function usageQuery<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UsageQueryError) {
      throw new ApiError('invalid_parameter', err.message, {
        details: [{ field: err.parameter, message: err.message }],
      });
    }
    throw err;
  }
}

/**
 * A key's usage per UTC hour or day (UsageService, as `apikey usage` reads it): the periods of
 * [from, to) that hold requests, oldest first.
 */
@ApiTags('keys')
@ApiBearerAuth(ADMIN_BEARER_SCHEME)
@AdminErrorResponses(401, 429, 500, 503)
@Controller(`${ADMIN_BASE_PATH}/keys`)
export class AdminUsageController {
  constructor(private readonly usage: UsageService) {}

  @Get(':id/usage')
  @ApiOperation({
    operationId: 'getKeyUsage',
    summary: 'A key’s usage',
    description:
      'Requests counted against the key and how many were answered 429, per UTC hour or day, oldest first; periods without requests are left out. At most 1000 periods. With `by=operation`, one row per period and operation, each with `operation`. Each instance writes its counts every USAGE_FLUSH_MS, so the last seconds may not be in yet.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The periods with requests.', type: UsagePeriodDto, isArray: true })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] }, 404)
  async get(@Param('id') raw: string, @Query() query: KeyUsageQueryDto): Promise<UsagePeriodDto[]> {
    const id = keyId(raw);
    const periods = await usageQuery(() =>
      query.by === 'operation'
        ? this.usage.usageByOperation(id, parseUsageQuery(query))
        : this.usage.usage(id, parseUsageQuery(query)),
    );
    if (periods === null) throw new ApiError('not_found', `No API key has id ${id}.`);
    return periods;
  }
}

/** Usage over all keys: the totals per period and the busiest keys. */
@ApiTags('usage')
@ApiBearerAuth(ADMIN_BEARER_SCHEME)
@AdminErrorResponses(401, 429, 500, 503)
@Controller(`${ADMIN_BASE_PATH}/usage`)
export class AdminUsageTotalsController {
  constructor(private readonly usage: UsageService) {}

  @Get()
  @ApiOperation({
    operationId: 'getUsage',
    summary: 'Usage of all keys',
    description:
      'Requests counted against every key and how many were answered 429, summed per UTC hour or day, oldest first; periods without requests are left out. At most 1000 periods.',
  })
  @ApiResponse({ status: 200, description: 'The periods with requests.', type: UsagePeriodDto, isArray: true })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] })
  async totals(@Query() query: UsageQueryDto): Promise<UsagePeriodDto[]> {
    return usageQuery(() => this.usage.totals(parseUsageQuery(query)));
  }

  @Get('top-keys')
  @ApiOperation({
    operationId: 'getTopKeys',
    summary: 'The busiest keys',
    description:
      'The keys with the most requests in the UTC hours that overlap [from, to) (at most 1000 hours), most first, ties by id; keys without requests are left out.',
  })
  @ApiResponse({ status: 200, description: 'The keys, busiest first.', type: KeyUsageTotalDto, isArray: true })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] })
  async topKeys(@Query() query: TopKeysQueryDto): Promise<KeyUsageTotalDto[]> {
    const limit = query.limit === undefined ? DEFAULT_TOP_KEYS : Number(query.limit);
    return usageQuery(() => {
      const { from, to } = parseUsageQuery({ from: query.from, to: query.to });
      return this.usage.topKeys(from, to, limit);
    });
  }
}
