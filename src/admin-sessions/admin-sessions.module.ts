import { Module } from '@nestjs/common';
import { AdminSessionsRepository } from './admin-sessions.repository.js';
import { AdminSessionsService } from './admin-sessions.service.js';

/** Sessions of the operator console: cookies standing for an admin token for a while. */
@Module({
  providers: [AdminSessionsRepository, AdminSessionsService],
  exports: [AdminSessionsService],
})
export class AdminSessionsModule {}
