import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsageModule } from '../usage/usage.module.js';
import { AdmissionGuard } from './admission.guard.js';
import { AdmissionService } from './admission.service.js';
import { UnmatchedRouteAdmission } from './unmatched-routes.js';

/**
 * Admission of /v1 requests: API keys (AuthModule) and plan rate limits (RateLimitModule)
 * decided together by AdmissionService, which records each key's usage (UsageModule). AdmissionGuard is registered globally in AppModule.
 */
@Module({
  imports: [AuthModule, RateLimitModule, UsageModule],
  providers: [AdmissionService, AdmissionGuard, UnmatchedRouteAdmission],
  exports: [AdmissionService, AdmissionGuard],
})
export class AdmissionModule {}
