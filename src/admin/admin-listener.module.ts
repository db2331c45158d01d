import { Module } from '@nestjs/common';
import { AdminSessionsModule } from '../admin-sessions/admin-sessions.module.js';
import { AdminTokensModule } from '../admin-tokens/admin-tokens.module.js';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { UsageModule } from '../usage/usage.module.js';
import { AdminServer } from './admin.server.js';

/**
 * The admin API's listener inside the public application (docs/admin-api.md): AdminServer builds
 * the admin application (AdminApiModule) on ADMIN_PORT only, over this module's services.
 */
@Module({
  imports: [ApiKeysModule, AdminTokensModule, AdminSessionsModule, AuditModule, UsageModule],
  providers: [AdminServer],
  exports: [AdminServer],
})
export class AdminListenerModule {}
