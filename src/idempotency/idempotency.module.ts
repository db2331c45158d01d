import { Module } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { IdempotencyKeysRepository } from './idempotency-keys.repository.js';
import { IdempotencyService } from './idempotency.service.js';

/** Idempotency-Key records; import it where an operation is marked @Idempotent(). */
@Module({
  providers: [IdempotencyKeysRepository, IdempotencyService, IdempotencyInterceptor],
  exports: [IdempotencyService, IdempotencyInterceptor],
})
export class IdempotencyModule {}
