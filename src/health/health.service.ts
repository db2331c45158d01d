import { Inject, Injectable, Logger, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckResult, HealthCheckService, HealthIndicatorResult } from '@nestjs/terminus';
import { healthConfig, type HealthConfig } from '../config/health.config.js';
import { ShutdownService } from '../lifecycle/shutdown.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { DatabaseIndicator } from './database.indicator.js';
import { MigrationsIndicator, PENDING_MIGRATIONS } from './migrations.indicator.js';
import { RedisIndicator } from './redis.indicator.js';

/** Whether this instance should receive traffic, and if not, what a client may read of why. */
export type Readiness =
  | { status: 'ready'; result: HealthCheckResult }
  | { status: 'shutting-down' }
  | { status: 'not-ready'; reasons: string[] };

type Checked = Exclude<Readiness, { status: 'shutting-down' }>;

/**
 * What a client may read of why an instance is not ready (details go to the log, not the
 * response), each cause named only when it is one. The migrations check reads the database too:
 * when it could not, its failure adds nothing to the database's, and it says "not applied" only
 * when it found migrations to apply.
 */
function reasons(failed: Partial<HealthIndicatorResult>): string[] {
  const named: string[] = [];
  for (const [key, value] of Object.entries(failed)) {
    if (key === 'database') named.push('the database is unreachable');
    else if (key !== 'migrations') named.push(`${key} is down`);
    else if (String(value?.message).startsWith(PENDING_MIGRATIONS)) named.push('database migrations are not applied');
    else if (!failed.database) named.push('database migrations could not be checked');
  }
  return named;
}

/**
 * Readiness: not shutting down, the database answers, every migration on disk is applied, and
 * Redis (when configured) answers PING, which when it fails only degrades readiness (see
 * HealthController). Logs transitions rather than every probe.
 */
@Injectable()
export class HealthService {
  private readonly logger = new Logger('Readiness');
  private wasReady?: boolean;
  /** The readiness check under way, if any, and the last outcome with when it was known. */
  private pending?: Promise<Checked>;
  private last?: { at: number; value: Checked };

  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseIndicator,
    private readonly migrations: MigrationsIndicator,
    private readonly redis: RedisIndicator,
    private readonly shutdown: ShutdownService,
    private readonly metrics: MetricsService,
    @Inject(healthConfig.token) private readonly config: HealthConfig,
  ) {}

  async readiness(): Promise<Readiness> {
    // Ahead of the shared outcome: a cached `ready` must not outlive the start of shutdown.
    if (this.shutdown.isShuttingDown) return { status: 'shutting-down' };
    return this.shared();
  }

  /**
   * The readiness every probe shares: computed by at most one check at a time (probes arriving
   * meanwhile wait for it), and its outcome reused for READINESS_CACHE_MS after it finished.
   * A probe needs no key and is not limited, so without this each one would cost three queries
   * on the health check's single connection, a directory read and file reads: a flood of probes
   * would starve the balancer's own and turn healthy instances unready.
   */
  private shared(): Promise<Checked> {
    if (this.last && performance.now() - this.last.at < this.config.readinessCacheMs)
      return Promise.resolve(this.last.value);
    this.pending ??= this.compute()
      .then((value) => {
        this.last = { at: performance.now(), value };
        return value;
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async compute(): Promise<Checked> {
    const timeout = this.config.readinessTimeoutMs;
    try {
      const result = await this.health.check([
        () => this.database.check(timeout),
        () => this.migrations.check(timeout),
        ...(this.redis.configured ? [() => this.redis.check()] : []),
      ]);
      this.transition(true);
      return { status: 'ready', result };
    } catch (err) {
      // Terminus reports failed indicators as this exception; anything else is a bug, not a verdict.
      if (!(err instanceof ServiceUnavailableException)) throw err;
      const failed = (err.getResponse() as HealthCheckResult).error ?? {};
      if (failed.database) this.metrics.databaseError('unavailable');
      this.transition(false, failed);
      return { status: 'not-ready', reasons: reasons(failed) };
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
