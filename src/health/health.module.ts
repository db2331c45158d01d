import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller.js';
import { RedisHealth } from './redis-health.js';
import { ShutdownService } from '../lifecycle/shutdown.service.js';

/**
 * Liveness, readiness and the shutdown state they report. Terminus's own logger is off:
 * readiness logs its transitions itself instead of an error on every failed probe.
 */
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [ShutdownService, RedisHealth],
  exports: [ShutdownService],
})
export class HealthModule {}
