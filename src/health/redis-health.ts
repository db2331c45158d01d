import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { healthConfig, type HealthConfig } from '../config/health.config.js';
import { redisConfig, type RedisConfig } from '../config/redis.config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { connectRedis, type RedisConnection } from '../redis/redis-connection.js';

/**
 * Readiness's own connection to Redis (the rate limiter has its own): connected at start,
 * reconnecting in the background, and failing a ping at once while disconnected instead of
 * queueing it, so readiness answers within READINESS_TIMEOUT_MS whatever Redis does.
 */
@Injectable()
export class RedisHealth implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Readiness');
  private readonly client?: RedisConnection;
  private lastError?: string;

  constructor(
    @Inject(redisConfig.token) config: RedisConfig,
    @Inject(healthConfig.token) health: HealthConfig,
    private readonly metrics: MetricsService,
  ) {
    if (!config.redisTarget) return;
    this.client = connectRedis(config.redisTarget, {
      lazyConnect: true,
      connectionName: 'animal-store-readiness',
      connectTimeout: config.redisConnectTimeoutMs,
      commandTimeout: health.readinessTimeoutMs,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
      // Bounds how long closing waits for a socket that never closes (2 s by default, which
      // also delays exit after a connection that had already failed).
      disconnectTimeout: 200,
    });
    this.client.on('error', (err: Error) => {
      this.metrics.redisError('readiness');
      // ioredis repeats the error on every reconnection attempt: log each new one once.
      if (err.message !== this.lastError) this.logger.warn(`redis: ${err.message}`);
      this.lastError = err.message;
    });
    this.client.on('ready', () => (this.lastError = undefined));
  }

  get configured(): boolean {
    return this.client !== undefined;
  }

  onModuleInit(): void {
    // Not awaited: the service starts (and reports Redis down) while Redis is unreachable.
    this.client?.connect().catch(() => {});
  }

  /** Resolves when Redis answers PING; rejects at once while disconnected. */
  async ping(): Promise<void> {
    if (!this.client) return;
    if (this.client.status !== 'ready') throw new Error(`not connected (${this.client.status})`);
    try {
      await this.client.ping();
    } catch (err) {
      this.metrics.redisError('readiness');
      throw err;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.client || this.client.status === 'end') return;
    if (this.client.status !== 'ready') return this.client.disconnect();
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}
