import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AuditLogService } from '../audit/audit-log.service.js';
import { AdminErrorResponses } from '../errors/api-responses.decorator.js';
import { adminNextLink, adminPage } from './admin-paging.js';
import { ADMIN_BASE_PATH, ADMIN_BEARER_SCHEME } from './admin-paths.js';
import { AuditEntryDto, auditEntryJson } from './dto/audit-entry.dto.js';
import { AdminListQueryDto } from './dto/list-query.dto.js';

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
      'Every change to an API key or an admin token, from the key tool or this API, newest first. When older entries follow, the `Link` header carries the next page (rel="next").',
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
  async list(@Query() query: AdminListQueryDto, @Res({ passthrough: true }) res: Response): Promise<AuditEntryDto[]> {
    const { limit, from } = adminPage(query);
    const page = await this.audit.page(limit, from);
    const link = adminNextLink(`${ADMIN_BASE_PATH}/audit`, limit, page.nextBefore);
    if (link !== undefined) res.setHeader('Link', link);
    return page.entries.map(auditEntryJson);
  }
}
