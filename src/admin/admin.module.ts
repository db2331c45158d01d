import { Module } from '@nestjs/common';
import { AdminTokensModule } from '../admin-tokens/admin-tokens.module.js';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { UsageModule } from '../usage/usage.module.js';
import { AdminServer } from './admin.server.js';

/** The admin API (docs/admin-api.md): its listener, built on ADMIN_PORT only. */
@Module({
  imports: [ApiKeysModule, AdminTokensModule, AuditModule, UsageModule],
  providers: [AdminServer],
  exports: [AdminServer],
})
export class AdminModule {}
