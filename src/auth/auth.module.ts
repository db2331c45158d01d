import { Module } from '@nestjs/common';
import { AdminTokensRepository } from './admin-tokens.repository.js';
import { AdminTokensService } from './admin-tokens.service.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import { AuditLogRepository } from './audit-log.repository.js';
import { AuditLogService } from './audit-log.service.js';
import { AuthService } from './auth.service.js';
import { DevKeyIssuer } from './dev-key.js';

/**
 * API keys: issuing and storing them (ApiKeysService) and verifying bearer keys (AuthService, for
 * admission); admin tokens (AdminTokensService) and the audit log of changes to both.
 */
@Module({
  providers: [
    ApiKeysRepository,
    AuditLogRepository,
    AdminTokensRepository,
    ApiKeysService,
    AdminTokensService,
    AuditLogService,
    AuthService,
    DevKeyIssuer,
  ],
  exports: [ApiKeysService, AdminTokensService, AuditLogService, AuthService],
})
export class AuthModule {}
