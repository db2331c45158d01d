import { Module } from '@nestjs/common';
import { ApiKeysService } from './api-keys.service.js';
import { AuthService } from './auth.service.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { DevKeyIssuer } from './dev-key.js';

/**
 * API keys and bearer authentication. The guard itself is registered globally in AppModule
 * (APP_GUARD), after the rate-limit guard; AuthService is exported for that guard.
 */
@Module({
  providers: [ApiKeysService, AuthService, BearerAuthGuard, DevKeyIssuer],
  exports: [ApiKeysService, AuthService, BearerAuthGuard],
})
export class AuthModule {}
