import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DatabaseIndicator } from './database.indicator.js';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';
import { MigrationsIndicator } from './migrations.indicator.js';
import { RedisHealth } from './redis-health.js';
import { RedisIndicator } from './redis.indicator.js';
import { ShutdownService } from '../lifecycle/shutdown.service.js';

/**
 * Liveness, readiness and the shutdown state they report. Terminus's own logger is off:
 * readiness logs its transitions itself instead of an error on every failed probe.
 */
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [ShutdownService, RedisHealth, DatabaseIndicator, MigrationsIndicator, RedisIndicator, HealthService],
  exports: [ShutdownService],
})
export class HealthModule {}
