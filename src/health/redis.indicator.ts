import { Injectable, Logger } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { RedisHealth } from './redis-health.js';

/**
 * Redis answers PING on readiness's own connection. Its failure is `degraded`, never `down`:
 * the rate limiter then counts per instance and the service keeps serving.
 */
@Injectable()
export class RedisIndicator {
  private readonly logger = new Logger('Readiness');
  private lastError?: string;

  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly redis: RedisHealth,
  ) {}

  /** Whether Redis is configured (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS): else nothing to check. */
  get configured(): boolean {
    return this.redis.configured;
  }

  async check(): Promise<HealthIndicatorResult<'redis'>> {
    const check = this.indicators.check('redis');
    try {
      await this.redis.ping();
      this.lastError = undefined;
      return check.up();
    } catch (err) {
      // The reason goes to the log (once per new reason), never to the public body.
      const reason = (err as Error).message;
      if (reason !== this.lastError) this.logger.warn(`redis: ${reason}; rate limits count per instance`);
      this.lastError = reason;
      return check.degraded({ message: 'unreachable; rate limits count per instance' });
    }
  }
}
