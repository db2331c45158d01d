import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuditLogService } from '../audit/audit-log.service.js';
import type { AuditAction } from '../audit/audit.js';
import { ApiError } from '../errors/api-error.js';
import { parsePositiveInt64 } from '../json/int64.js';
import { AdminErrorResponses } from '../errors/api-responses.decorator.js';
import { adminNextLink, adminPage } from './admin-paging.js';
import { ADMIN_BASE_PATH, ADMIN_BEARER_SCHEME } from './admin-paths.js';
import { AuditEntryDto, auditEntryJson } from './dto/audit-entry.dto.js';
import { AuditListQueryDto } from './dto/audit-list-query.dto.js';

/** The keyId filter: an int64 from 1, else 400 invalid_parameter. */
function keyIdParameter(raw: string): bigint {
  const id = parsePositiveInt64(raw);
  if (id === null) {
    const message = 'keyId must be an integer from 1 to 9223372036854775807';
    throw new ApiError('invalid_parameter', `${message}.`, { details: [{ field: 'keyId', message }] });
  }
  return id;
}

@ApiTags('audit')
@ApiBearerAuth(ADMIN_BEARER_SCHEME)
@AdminErrorResponses(401, 429, 500, 503)
@Controller(`${ADMIN_BASE_PATH}/audit`)
export class AdminAuditController {
  constructor(private readonly audit: AuditLogService) {}

  @Get()
  @ApiOperation({
    operationId: 'listAuditEntries',
    summary: 'Read the audit log',
    description:
      'Every change to an API key or an admin token, from the key tool or this API, newest first. `actor`, `action` and `keyId` narrow the list (all given must hold). When older entries follow, the `Link` header carries the next page (rel="next"), with the same filters.',
  })
  @ApiResponse({
    status: 200,
    description: 'A page of entries.',
    type: AuditEntryDto,
    isArray: true,
    headers: {
      Link: { description: 'RFC 8288 link to the next page, when there is one.', schema: { type: 'string' } },
    },
  })
  @AdminErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] })
  async list(@Query() query: AuditListQueryDto, @Res({ passthrough: true }) res: Response): Promise<AuditEntryDto[]> {
    const { limit, from } = adminPage(query);
    const { actor, action, keyId } = query;
    const page = await this.audit.page(limit, from, {
      actor,
      action: action as AuditAction | undefined, // checked by AuditListQueryDto
      keyId: keyId === undefined ? undefined : keyIdParameter(keyId),
    });
    const link = adminNextLink(`${ADMIN_BASE_PATH}/audit`, limit, page.nextBefore, { actor, action, keyId });
    if (link !== undefined) res.setHeader('Link', link);
    return page.entries.map(auditEntryJson);
  }
}
