import { Controller, Get, Query, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { PLANS, type Plan } from '../api-keys/plans.js';
import { ApiKeyAuth } from '../auth/api-key-auth.decorator.js';
import { ApiErrorResponses } from '../errors/api-responses.decorator.js';
import { NoQueryParametersPipe } from '../http/no-query-parameters.pipe.js';
import { requestContext, type RequestQuota, type RequestQuotaWindow } from '../request-context/request-context.js';
import { RateLimitDto, RateLimitWindowDto } from './dto/rate-limit.dto.js';
import { QUOTA_READS_PER_MINUTE } from './quota-reads.js';

/** The caller's own rate limits, read without spending them (docs/rate-limits.md, "Reading your quota"). */
@ApiTags('rate-limits')
@Controller('v1/rate_limit')
export class RateLimitController {
  @Get()
  @ApiKeyAuth({ counted: false })
  @ApiOperation({
    operationId: 'getRateLimit',
    summary: "Read the API key's rate limits",
    description: `The API key's plan, each window's limit, remaining requests and reset, and a ban if any, without spending a request: this operation is not counted against the key's limits. It has a budget of its own instead, ${QUOTA_READS_PER_MINUTE} reads a minute per key and instance (429 beyond). Any valid key may read its own quota; no scope is needed.`,
  })
  @ApiResponse({ status: 200, description: "The API key's rate limits.", type: RateLimitDto })
  @ApiErrorResponses(400, 429, 500, 503)
  get(@Req() req: Request, @Query(NoQueryParametersPipe) _query: void): RateLimitDto {
    // AdmissionGuard read the quota (AdmissionService, step 5) and recorded it with the key's
    // principal in the request context: a route of this controller is never reached without them.
    const admission = requestContext(req).admission;
    const plan = PLANS.find((p) => p === admission?.principal?.plan);
    if (plan === undefined || admission?.quota === undefined) {
      throw new Error('GET /v1/rate_limit reached without a valid key and its quota read by admission');
    }
    return toDto(plan, admission.quota);
  }
}

function toDto(plan: Plan, quota: RequestQuota): RateLimitDto {
  const windows: Record<string, RateLimitWindowDto> = {};
  for (const w of quota.windows) windows[w.name] = toWindow(w);
  return {
    plan,
    limits: { minute: windows.minute, day: windows.day },
    banned: quota.bannedUntilMs === undefined ? null : { until: Math.ceil(quota.bannedUntilMs / 1000) },
  };
}

function toWindow(w: RequestQuotaWindow): RateLimitWindowDto {
  return { limit: w.limit, remaining: Math.max(0, w.limit - w.count), reset: Math.ceil(w.resetMs / 1000) };
}
