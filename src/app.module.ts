import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AdminListenerModule } from './admin/admin-listener.module.js';
import { AdmissionGuard } from './admission/admission.guard.js';
import { AdmissionModule } from './admission/admission.module.js';
import { AllExceptionsFilter } from './errors/all-exceptions.filter.js';
import { ApiValidationPipe } from './http/api-validation.pipe.js';
import { Clock, SystemClock } from './time/clock.js';
import { AppConfig, loadConfig } from './config/config.js';
import { ConfigModule } from './config/config.module.js';
import { HealthModule } from './health/health.module.js';
import { LeakedKeysModule } from './leaked-keys/leaked-keys.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { PetsModule } from './pets/pets.module.js';
import { DeprecationHeadersGuard } from './deprecation/deprecation.js';
import { PrismaModule } from './database/prisma.module.js';
import { TracingModule } from './tracing/tracing.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

export interface AppModuleOptions {
  /** Configuration to use instead of process.env (tests). */
  config?: AppConfig;
  /** Clock to use instead of the system clock (tests). */
  clock?: Clock;
}

/**
 * The whole application. Every cross-cutting piece (the exception filter, the validation pipe,
 * the deprecation and admission guards) is an APP_* provider here, so a test that imports this
 * module runs exactly the production stack.
 */
@Module({})
export class AppModule {
  static forRoot(options: AppModuleOptions = {}): DynamicModule {
    // Read here rather than by ConfigModule alone: which routes exist depends on it (METRICS_PORT).
    const config = options.config ?? loadConfig();
    return {
      module: AppModule,
      global: true,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule,
        TracingModule,
        MetricsModule.forRoot(config.metrics),
        PrismaModule,
        WebhooksModule,
        AdmissionModule,
        HealthModule,
        PetsModule,
        LeakedKeysModule.forRoot(config.leakedKeys),
        OpenApiModule,
        AdminListenerModule,
      ],
      providers: [
        { provide: Clock, useValue: options.clock ?? new SystemClock() },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        // Global guards run in the order listed. First the deprecation headers of an operation
        // marked @Deprecated(), so that every refusal of it carries them too; then admission:
        // every route not marked @Public() needs a valid bearer API key within its limits.
        { provide: APP_GUARD, useClass: DeprecationHeadersGuard },
        { provide: APP_GUARD, useClass: AdmissionGuard },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        // No global interceptor: results are written as JSON by the HTTP adapter
        // (JsonExpressAdapter), and the operations that take a body read it with @JsonBody().
      ],
      exports: [Clock],
    };
  }
}
