import { Body, Controller, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';
import type { ErrorCode } from '../errors/api-error.js';
import { ApiErrorResponses, exampleBody } from '../errors/api-responses.decorator.js';
import { ErrorDto } from '../errors/error.dto.js';
import { JsonBody } from '../http/json-body.interceptor.js';
import { NoQueryParametersPipe } from '../http/no-query-parameters.pipe.js';
import { CredentialsReceiptDto, RevokeCredentialsDto } from './dto/revoke-credentials.dto.js';
import { MAX_REPORT_BODY_BYTES, MAX_REPORTED_SECRETS } from './leaked-key-reports.js';
import { LeakedKeysService } from './leaked-keys.service.js';
import { REPORTS_PER_HOUR, ReportBudgetGuard } from './report-budget.guard.js';

/** The documented example of this operation's own answer with `code` at `status`. */
function example(status: number, code: ErrorCode, message: string) {
  return { [code]: { summary: code, value: { ...exampleBody(status, code), message } } };
}

/** Revocation of exposed API keys by whoever found them (docs/api-keys.md, "When a key leaks"). */
@ApiTags('credentials')
@Controller('v1/credentials')
export class CredentialsController {
  constructor(private readonly leakedKeys: LeakedKeysService) {}

  @Post('revoke')
  @HttpCode(202)
  @Public()
  @UseGuards(ReportBudgetGuard)
  @ApiOperation({
    operationId: 'revokeCredentials',
    summary: 'Revoke exposed API keys',
    // No credentials: stated, so the document says so rather than leaving it unsaid.
    security: [],
    description:
      `No API key needed: whoever holds a key may revoke it. Send 1 to ${MAX_REPORTED_SECRETS} strings found exposed; each that is a live key of this service is revoked and refused by every instance within 5 seconds (or only marked leaked, as the operator configures). ` +
      `The answer is the same whatever the strings were: it never tells which were keys. A body is at most ${MAX_REPORT_BODY_BYTES} bytes; each client address may send ${REPORTS_PER_HOUR} requests an hour (429 beyond).`,
  })
  @ApiResponse({ status: 202, description: 'The report was received.', type: CredentialsReceiptDto })
  @ApiErrorResponses(
    { status: 400, codes: ['validation_failed', 'malformed_json', 'unknown_parameter'] },
    415,
    500,
    503,
  )
  @ApiResponse({
    status: 413,
    description: `The request body is larger than ${MAX_REPORT_BODY_BYTES} bytes (\`payload_too_large\`).`,
    type: ErrorDto,
    examples: example(413, 'payload_too_large', `The request body must be at most ${MAX_REPORT_BODY_BYTES} bytes.`),
  })
  @ApiResponse({
    status: 429,
    description: `This client address sent ${REPORTS_PER_HOUR} reports this hour; wait Retry-After seconds (\`rate_limit_exceeded\`).`,
    type: ErrorDto,
    examples: example(
      429,
      'rate_limit_exceeded',
      `Too many reports from this client address (${REPORTS_PER_HOUR} per hour); retry after 1740 seconds.`,
    ),
    headers: {
      'Retry-After': {
        description: 'Whole seconds until the hour ends.',
        schema: { type: 'integer', minimum: 1, maximum: 3600 },
      },
    },
  })
  @JsonBody({ maxBytes: MAX_REPORT_BODY_BYTES })
  async revoke(
    @Body() body: RevokeCredentialsDto,
    @Query(NoQueryParametersPipe) _query: void,
  ): Promise<CredentialsReceiptDto> {
    return this.leakedKeys.revokeCredentials(body.credentials);
  }
}
