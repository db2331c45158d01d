import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IsOptional, IsString, type ValidationArguments } from 'class-validator';
import { ApiError } from '../errors/api-error.js';
import { AdminErrorResponses } from '../errors/api-responses.decorator.js';
import { PureQuery } from '../http/api-validation.pipe.js';
import { GRANULARITIES, parseUsageQuery, UsageQueryError, UsageService } from '../usage/usage.service.js';
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

class UsagePeriodDto {
  @ApiProperty({ format: 'date-time', description: 'The start of the UTC hour or day.' })
  period!: string;

  @ApiProperty({ type: 'integer', description: 'Requests counted against the key’s rate limits.' })
  requests!: number;

  @ApiProperty({ type: 'integer', description: 'Of those, the ones answered 429.' })
  limited!: number;
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
      'Requests counted against the key and how many were answered 429, per UTC hour or day, oldest first; periods without requests are left out. At most 1000 periods. Each instance writes its counts every USAGE_FLUSH_MS, so the last seconds may not be in yet.',
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, description: 'The periods with requests.', type: UsagePeriodDto, isArray: true })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] }, 404)
  async get(@Param('id') raw: string, @Query() query: UsageQueryDto): Promise<UsagePeriodDto[]> {
    const id = keyId(raw);
    let periods: UsagePeriodDto[] | null;
    try {
      periods = await this.usage.usage(id, parseUsageQuery(query));
    } catch (err) {
      if (err instanceof UsageQueryError) {
        throw new ApiError('invalid_parameter', err.message, {
          details: [{ field: err.parameter, message: err.message }],
        });
      }
      throw err;
    }
    if (periods === null) throw new ApiError('not_found', `No API key has id ${id}.`);
    return periods;
  }
}
