import { Controller, Get, Inject, Logger, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorResult,
  HealthIndicatorService,
} from '@nestjs/terminus';
import { Public } from '../auth/public.decorator.js';
import { DB_RETRY_AFTER_SECONDS } from '../errors/database-errors.js';
import { ApiError } from '../errors/api-error.js';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import { healthConfig, type HealthConfig } from '../config/health.config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { Database } from '../database/database.js';
import { pendingMigrations } from '../database/migrator.js';
import { DATABASE } from '../database/prisma.tokens.js';
import { RedisHealth } from './redis-health.js';
import { ShutdownService } from '../lifecycle/shutdown.service.js';

/** The outcome of one readiness check, shared by the probes that asked for it. */
type Readiness = { ok: true; result: HealthCheckResult } | { ok: false; reasons: string[] };

/** What a client may read about each failed check (details go to the log, not the response). */
const FAILURE_MESSAGES: Record<string, string> = {
  database: 'the database is unreachable',
  migrations: 'database migrations are not applied',
};

/**
 * Liveness and readiness for the load balancer and orchestrator; outside /v1, no API key,
 * not rate limited.
 *
 * - /healthz: the process is up and its event loop answers. It checks no dependency, since
 *   restarting the process would not bring a database back.
 * - /readyz: this instance should receive traffic: not shutting down, the database answers,
 *   every migration on disk is applied, and Redis (with REDIS_URL) answers PING. A Redis outage
 *   reports `degraded` with 200: the rate limiter then counts per instance and the service
 *   keeps serving (contract, "Rate limits"); failing readiness on every instance at once would
 *   turn a Redis outage into a full one. Every other failure is 503 service_unavailable with
 *   Retry-After, in the Error body. The body names what failed, never how (that is logged).
 */
@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  private readonly logger = new Logger('Readiness');
  private wasReady?: boolean;
  private redisError?: string;
  /** The readiness check under way, if any, and the last outcome with when it was known. */
  private pending?: Promise<Readiness>;
  private last?: { at: number; value: Readiness };

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly shutdown: ShutdownService,
    private readonly redis: RedisHealth,
    private readonly metrics: MetricsService,
    @Inject(DATABASE) private readonly db: Database,
    @Inject(healthConfig.token) private readonly config: HealthConfig,
    @Inject(databaseConfig.token) private readonly database: DatabaseConfig,
  ) {}

  @Get('healthz')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  async ready(): Promise<HealthCheckResult> {
    if (this.shutdown.isShuttingDown) throw unavailable('The instance is shutting down.');
    const readiness = await this.readiness();
    if (readiness.ok) return readiness.result;
    throw unavailable(`The instance is not ready: ${readiness.reasons.join('; ')}.`);
  }

  /**
   * The readiness every probe shares: computed by at most one check at a time (probes arriving
   * meanwhile wait for it), and its outcome reused for READINESS_CACHE_MS after it finished.
   * A probe needs no key and is not limited, so without this each one would cost three queries
   * on the health check's single connection, a directory read and file reads: a flood of probes
   * would starve the balancer's own and turn healthy instances unready.
   */
  private readiness(): Promise<Readiness> {
    if (this.last && performance.now() - this.last.at < this.config.readinessCacheMs) return Promise.resolve(this.last.value);
    this.pending ??= this.compute()
      .then((value) => {
        this.last = { at: performance.now(), value };
        return value;
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async compute(): Promise<Readiness> {
    const timeout = this.config.readinessTimeoutMs;
    try {
      const result = await this.health.check([
        () =>
          this.indicators
            .check('database')
            .attempt(() => this.databaseAnswers())
            .withTimeout(timeout),
        () =>
          this.indicators
            .check('migrations')
            .attempt(() => this.migrationsApplied())
            .withTimeout(timeout),
        ...(this.redis.configured ? [() => this.redisStatus()] : []),
      ]);
      this.transition(true);
      return { ok: true, result };
    } catch (err) {
      if (!(err instanceof ServiceUnavailableException)) throw err;
      const failed = (err.getResponse() as HealthCheckResult).error ?? {};
      if (failed.database) this.metrics.databaseError('unavailable');
      this.transition(false, failed);
      return { ok: false, reasons: Object.keys(failed).map((key) => FAILURE_MESSAGES[key] ?? `${key} is down`) };
    }
  }

  private async databaseAnswers(): Promise<void> {
    await this.db.withRunner((sql) => sql.query('SELECT 1'));
  }

  private async migrationsApplied(): Promise<void> {
    const pending = await this.db.withRunner((sql) => pendingMigrations(sql, this.database.migrationsDir));
    if (pending.length > 0) throw new Error(`pending: ${pending.join(', ')}`);
  }

  private async redisStatus(): Promise<HealthIndicatorResult<'redis'>> {
    const check = this.indicators.check('redis');
    try {
      await this.redis.ping();
      this.redisError = undefined;
      return check.up();
    } catch (err) {
      // The reason goes to the log (once per new reason), never to the public body.
      const reason = (err as Error).message;
      if (reason !== this.redisError) this.logger.warn(`redis: ${reason}; rate limits count per instance`);
      this.redisError = reason;
      return check.degraded({ message: 'unreachable; rate limits count per instance' });
    }
  }

  /** Logs when readiness changes, with the reasons, rather than on every probe. */
  private transition(ready: boolean, failed: Partial<HealthIndicatorResult> = {}): void {
    if (this.wasReady === ready) return;
    this.wasReady = ready;
    if (ready) {
      this.logger.log('ready');
    } else {
      const details = Object.entries(failed).map(
        ([key, value]) => `${key}: ${String(value?.message ?? value?.status)}`,
      );
      this.logger.warn(`not ready: ${details.join('; ')}`);
    }
  }
}

function unavailable(message: string): ApiError {
  return new ApiError(503, 'service_unavailable', message, undefined, {
    'Retry-After': String(DB_RETRY_AFTER_SECONDS),
  });
}
