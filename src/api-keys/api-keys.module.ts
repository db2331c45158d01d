import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import { DevKeyIssuer } from './dev-key.js';

/**
 * The lifecycle of API keys: issuing, changing, rolling and revoking them (ApiKeysService, for
 * the admin API and the key tool), and the development key printed at first start.
 */
@Module({
  imports: [AuditModule],
  providers: [ApiKeysRepository, ApiKeysService, DevKeyIssuer],
  exports: [ApiKeysService],
})
export class ApiKeysModule {}
