import { Module } from '@nestjs/common';
import { DeprecationModule } from '../deprecation/deprecation.module.js';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { PetsController } from './pets.controller.js';
import { PetsRepository } from './pets.repository.js';
import { PetsService } from './pets.service.js';

@Module({
  imports: [IdempotencyModule, DeprecationModule],
  controllers: [PetsController],
  providers: [PetsRepository, PetsService],
})
export class PetsModule {}
