import { Module } from '@nestjs/common';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { SunsetGuard } from './deprecation.js';
import { PetsController } from './pets.controller.js';
import { PetsService } from './pets.service.js';

@Module({
  imports: [IdempotencyModule],
  controllers: [PetsController],
  // The deprecation headers are set by DeprecationHeadersGuard, the first of AppModule's global guards.
  providers: [PetsService, SunsetGuard],
})
export class PetsModule {}
