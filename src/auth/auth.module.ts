import { Module } from '@nestjs/common';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import { AuthService } from './auth.service.js';
import { DevKeyIssuer } from './dev-key.js';

/** API keys: issuing and storing them (ApiKeysService) and verifying bearer keys (AuthService, for admission). */
@Module({
  providers: [ApiKeysRepository, ApiKeysService, AuthService, DevKeyIssuer],
  exports: [ApiKeysService, AuthService],
})
export class AuthModule {}
