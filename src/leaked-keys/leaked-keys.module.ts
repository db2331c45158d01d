import { DynamicModule, Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import type { LeakedKeysConfig } from '../config/leaked-keys.config.js';
import { RateLimitStoreModule } from '../rate-limit/rate-limit.module.js';
import { CredentialsController } from './credentials.controller.js';
import { GithubPublicKeys } from './github-public-keys.service.js';
import { GithubSecretScanningController } from './github-secret-scanning.controller.js';
import { LeakedKeysService } from './leaked-keys.service.js';
import { ReportBudgetGuard } from './report-budget.guard.js';

/**
 * Reports of leaked API keys (docs/api-keys.md, "When a key leaks"): POST /v1/credentials/revoke
 * always, POST /v1/secret-scanning/github only while SECRET_SCANNING_GITHUB_KEYS names GitHub's
 * keys (else that path is no route: 404 as any other).
 */
@Module({})
export class LeakedKeysModule {
  static forRoot(config: LeakedKeysConfig): DynamicModule {
    const github = config.secretScanningGithubKeys !== undefined;
    return {
      module: LeakedKeysModule,
      imports: [ApiKeysModule, RateLimitStoreModule],
      controllers: github ? [CredentialsController, GithubSecretScanningController] : [CredentialsController],
      providers: [LeakedKeysService, ReportBudgetGuard, ...(github ? [GithubPublicKeys] : [])],
    };
  }
}
