import { Global, Module } from '@nestjs/common';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';

/** Prometheus metrics; global so any module can inject MetricsService to record its events. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, MetricsTokenGuard],
  exports: [MetricsService],
})
export class MetricsModule {}
