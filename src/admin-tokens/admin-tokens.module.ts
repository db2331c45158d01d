import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AdminTokensRepository } from './admin-tokens.repository.js';
import { AdminTokensService } from './admin-tokens.service.js';

/** Admin tokens: the bearer credentials of the admin API, issued and revoked by the key tool. */
@Module({
  imports: [AuditModule],
  providers: [AdminTokensRepository, AdminTokensService],
  exports: [AdminTokensService],
})
export class AdminTokensModule {}
