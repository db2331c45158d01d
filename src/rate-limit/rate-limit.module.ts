import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { Clock } from '../time/clock.js';
import { rateLimitConfig, type RateLimitConfig } from '../config/rate-limit.config.js';
import { redisConfig, type RedisConfig } from '../config/redis.config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { MemoryRateLimitStore } from './memory.store.js';
import { QuotaNoticesRepository } from './quota-notices.repository.js';
import { QuotaThresholds } from './quota-thresholds.js';
import { RateLimitController } from './rate-limit.controller.js';
import { RateLimiter, THROTTLERS } from './rate-limiter.js';
import { RateLimitStore } from './rate-limit.store.js';
import { RedisRateLimitStore } from './redis.store.js';

export function createRateLimitStore(
  config: RateLimitConfig,
  redis: RedisConfig,
  clock: Clock,
  metrics?: MetricsService,
): RateLimitStore {
  const memory = () => new MemoryRateLimitStore(clock, config.rateLimitMemoryMaxKeys, config.rateLimitMemoryMaxBytes);
  if (!redis.redisTarget) return memory();
  const store = new RedisRateLimitStore(clock, memory, {
    target: redis.redisTarget,
    prefix: config.rateLimitPrefix,
    commandTimeoutMs: redis.redisCommandTimeoutMs,
    connectTimeoutMs: redis.redisConnectTimeoutMs,
    onError: () => metrics?.redisError('rate-limit'),
  });
  metrics?.rateLimitSharing(() => store.shared);
  return store;
}

/** The counters: Redis (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS), else process memory. */
@Module({
  providers: [
    {
      provide: RateLimitStore,
      inject: [rateLimitConfig.token, redisConfig.token, Clock, MetricsService],
      useFactory: createRateLimitStore,
    },
  ],
  exports: [RateLimitStore],
})
export class RateLimitStoreModule {}

/**
 * Plan rate limits (docs/rate-limits.md). ThrottlerModule holds the two named windows (THROTTLERS,
 * made from WINDOWS) and the service's store as its storage; RateLimiter counts a request in those
 * windows with that store, for the admission module. GET /v1/rate_limit answers a key's own
 * quota, read by the admission module without counting. QuotaThresholds announces keys reaching
 * 80% and 100% of their day window, from the counts admission shows it.
 */
@Module({
  controllers: [RateLimitController],
  imports: [
    RateLimitStoreModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStoreModule],
      inject: [RateLimitStore],
      useFactory: (storage: RateLimitStore) => ({ throttlers: THROTTLERS, storage, setHeaders: false }),
    }),
  ],
  providers: [RateLimiter, QuotaNoticesRepository, QuotaThresholds],
  exports: [RateLimiter, QuotaThresholds],
})
export class RateLimitModule {}
