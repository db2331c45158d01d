import { Module } from '@nestjs/common';
import { ApiKeysRepository } from '../api-keys/api-keys.repository.js';
import { KeyUsageRepository } from './key-usage.repository.js';
import { UsageRecorder } from './usage-recorder.js';
import { UsageService } from './usage.service.js';

/**
 * Usage per key and hour: UsageRecorder counts (admission records each request counted against a
 * key) and writes; UsageService reads, for the admin API and the key tool.
 */
@Module({
  providers: [KeyUsageRepository, ApiKeysRepository, UsageRecorder, UsageService],
  exports: [UsageRecorder, UsageService],
})
export class UsageModule {}
