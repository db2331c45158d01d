import { Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuthService } from './auth.service.js';

/**
 * Verification of bearer API keys on the request path (AuthService, for admission): the key
 * cache, the poller of key changes, last-use times and the guess budgets.
 */
@Module({
  imports: [ApiKeysModule],
  providers: [AuthService],
  exports: [AuthService],
})
export class AuthModule {}
