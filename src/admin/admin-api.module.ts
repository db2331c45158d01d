import { DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AdminSessionsService } from '../admin-sessions/admin-sessions.service.js';
import { AdminTokensService } from '../admin-tokens/admin-tokens.service.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { AuditLogService } from '../audit/audit-log.service.js';
import { AllExceptionsFilter } from '../errors/all-exceptions.filter.js';
import { ApiValidationPipe } from '../http/api-validation.pipe.js';
import { AppLogger } from '../logging/app-logger.js';
import { Clock } from '../time/clock.js';
import { AdminAuditController } from './admin-audit.controller.js';
import { AdminAuthGuard } from './admin-auth.guard.js';
import { AdminKeysController } from './admin-keys.controller.js';
import { AdminOpenApiController } from './admin-openapi.js';
import { AdminUsageController, AdminUsageTotalsController } from './admin-usage.controller.js';
import { UsageService } from '../usage/usage.service.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { AdminWebhooksController } from './admin-webhooks.controller.js';
import { ConsoleAssetsController } from './console/console-assets.controller.js';
import { ConsoleSessionGuard } from './console/console-session.guard.js';
import { ConsoleSignInController } from './console/console-sign-in.controller.js';
import { ConsoleController } from './console/console.controller.js';
import { adminConfig, type AdminConfig } from '../config/admin.config.js';

/** The instances of the public application the admin application shares (one database, one set of services). */
export interface AdminShared {
  keys: ApiKeysService;
  tokens: AdminTokensService;
  sessions: AdminSessionsService;
  config: AdminConfig;
  audit: AuditLogService;
  usage: UsageService;
  webhooks: WebhooksService;
  logger: AppLogger;
  clock: Clock;
}

/**
 * The root module of the admin API's own application (AdminServer builds it on ADMIN_PORT): its
 * controllers and the operator console's (under /admin/, with their own session guard), its one
 * global guard (the admin token; the console's routes are open to it), and the public application's exception
 * filter and validation pipe; the services are the public application's own instances.
 */
@Module({})
export class AdminApiModule {
  static forRoot(shared: AdminShared): DynamicModule {
    const providers: Provider[] = [
      { provide: ApiKeysService, useValue: shared.keys },
      { provide: AdminTokensService, useValue: shared.tokens },
      { provide: AdminSessionsService, useValue: shared.sessions },
      { provide: adminConfig.token, useValue: shared.config },
      ConsoleSessionGuard,
      { provide: AuditLogService, useValue: shared.audit },
      { provide: UsageService, useValue: shared.usage },
      { provide: WebhooksService, useValue: shared.webhooks },
      { provide: AppLogger, useValue: shared.logger },
      { provide: Clock, useValue: shared.clock },
      { provide: APP_FILTER, useClass: AllExceptionsFilter },
      { provide: APP_GUARD, useClass: AdminAuthGuard },
      { provide: APP_PIPE, useClass: ApiValidationPipe },
    ];
    return {
      module: AdminApiModule,
      controllers: [
        AdminKeysController,
        AdminUsageController,
        AdminUsageTotalsController,
        AdminAuditController,
        AdminWebhooksController,
        AdminOpenApiController,
        ConsoleSignInController,
        ConsoleAssetsController,
        ConsoleController,
      ],
      providers,
    };
  }
}
