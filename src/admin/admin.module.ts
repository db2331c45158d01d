import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { UsageModule } from '../usage/usage.module.js';
import { AdminServer } from './admin.server.js';

/** The admin API (docs/admin-api.md): its listener, built on ADMIN_PORT only. */
@Module({
  imports: [AuthModule, UsageModule],
  providers: [AdminServer],
  exports: [AdminServer],
})
export class AdminModule {}
