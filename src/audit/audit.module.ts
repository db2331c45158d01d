import { Module } from '@nestjs/common';
import { AuditLogRepository } from './audit-log.repository.js';
import { AuditLogService } from './audit-log.service.js';

/** The audit log of changes to API keys and admin tokens: appended by their services, read by the admin API. */
@Module({
  providers: [AuditLogRepository, AuditLogService],
  exports: [AuditLogRepository, AuditLogService],
})
export class AuditModule {}
