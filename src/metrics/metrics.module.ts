import { DynamicModule, Global, Module } from '@nestjs/common';
import type { MetricsConfig } from '../config/metrics.config.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsServer } from './metrics.server.js';
import { AuthObserver } from '../auth/auth.types.js';
import { AuthMetrics, MetricsService } from './metrics.service.js';

/**
 * Prometheus metrics; global so any module can inject MetricsService to record its events.
 * /metrics is a route of the app, or, with METRICS_PORT, served only by MetricsServer on that
 * port (the app then has no such route at all).
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(config: MetricsConfig): DynamicModule {
    return {
      module: MetricsModule,
      controllers: config.metricsPort === undefined ? [MetricsController] : [],
      providers: [
        MetricsService,
        MetricsTokenGuard,
        MetricsServer,
        {
          provide: AuthObserver,
          inject: [MetricsService],
          useFactory: (metrics: MetricsService) => new AuthMetrics(metrics),
        },
      ],
      exports: [MetricsService, AuthObserver],
    };
  }
}
