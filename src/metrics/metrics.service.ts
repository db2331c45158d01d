import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import {
  ADMIN_TOKEN_REFUSAL_REASONS,
  API_KEY_REFUSAL_REASONS,
  type AdminTokenRefusalReason,
  type ApiKeyRefusalReason,
  AuthObserver,
} from '../auth/auth.types.js';
import { PLANS } from '../api-keys/plans.js';

/** Why the rate limiter refused a request (the Error body's code). */
export type RateLimitRejection = 'rate_limit_exceeded' | 'api_key_temporarily_banned';

/** What kind of database failure was seen. */
export type DatabaseErrorKind = 'unavailable' | 'query';

/**
 * The service's Prometheus metrics, served at /metrics. Each application instance has its own
 * registry (never prom-client's global one), so tests that build several apps in one process
 * do not collide and every app reports only its own requests.
 *
 * Other modules record through the methods below: the rate limiter calls rateLimitRejected,
 * Redis users call redisError, the exception filter and readiness call databaseError.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  private readonly requestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly adminRequests = new Counter({
    name: 'admin_requests_total',
    help: 'Requests to the admin API (ADMIN_PORT), by method, route template and status code (401: refused token).',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [this.registry],
  });

  /** Requests being served: a plain count per request, read into the gauge when /metrics is scraped (its inc and dec hash labels on every call). */
  private requestsInFlight = 0;
  private readonly inFlight: Gauge = new Gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests being served right now.',
    registers: [this.registry],
    collect: (): void => this.inFlight.set(this.requestsInFlight),
  });

  private readonly rateLimitRejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429 by the rate limiter, by plan (anonymous: no valid key) and code.',
    labelNames: ['plan', 'code'] as const,
    registers: [this.registry],
  });

  private readonly rateLimitBans = new Counter({
    name: 'rate_limit_bans_total',
    help: 'Bans started: a key (or, for anonymous, a client address) refused more than RATE_LIMIT_BAN_THRESHOLD times in one limited period, by plan.',
    labelNames: ['plan'] as const,
    registers: [this.registry],
  });

  private readonly databaseErrors = new Counter({
    name: 'database_errors_total',
    help: 'Database failures seen by the service: unavailable (unreachable, timed out) or query (other errors).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  private readonly redisErrors = new Counter({
    name: 'redis_errors_total',
    help: 'Redis failures (connection errors, failed or timed-out commands), by the component that saw them.',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  private readonly apiKeyLookups = new Counter({
    name: 'api_key_lookups_total',
    help: 'API key lookups sent to the database (concurrent requests for one key share one).',
    registers: [this.registry],
  });

  private readonly apiKeyRefusals = new Counter({
    name: 'api_key_refusals_total',
    help: 'Bearer keys refused, by reason: malformed (incl. a forged version 2 tag), unknown (or revoked), expired, address_budget, instance_budget.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly adminTokenLookups = new Counter({
    name: 'admin_token_lookups_total',
    help: 'Admin token lookups sent to the database.',
    registers: [this.registry],
  });

  private readonly adminTokenRefusals = new Counter({
    name: 'admin_token_refusals_total',
    help: 'Well-formed admin tokens refused, by reason: unknown (or revoked), address_budget (refused without a lookup: too many unknown tokens from the address this minute), instance_budget.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly usageFlushRows = new Counter({
    name: 'usage_flush_rows_total',
    help: 'Rows of usage per key and hour written by this instance (one per key and hour in each write).',
    registers: [this.registry],
  });

  private readonly usageFlushRequests = new Counter({
    name: 'usage_flush_requests_total',
    help: 'Requests whose usage this instance has written to key_usage.',
    registers: [this.registry],
  });

  private readonly usageFlushFailures = new Counter({
    name: 'usage_flush_failures_total',
    help: 'Writes of usage per key that failed (their counts are kept and go with the next write).',
    registers: [this.registry],
  });

  private readonly leakedKeyReports = new Counter({
    name: 'leaked_key_reports_total',
    help: 'Secrets reported as leaked, by source (credentials_revoke, github) and outcome (revoked, notified, already_revoked, already_reported, inactive, not_found, invalid).',
    labelNames: ['source', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly leakedKeyReportRefusals = new Counter({
    name: 'leaked_key_report_refusals_total',
    help: 'Leaked-key reports refused whole, by source and error code (rate_limit_exceeded, invalid_signature).',
    labelNames: ['source', 'code'] as const,
    registers: [this.registry],
  });

  private readonly webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Attempts of webhook deliveries, by event type and outcome (succeeded; retrying: failed, another attempt is scheduled; failed: no attempt left).',
    labelNames: ['event', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly webhookAttemptDuration = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Duration of webhook delivery attempts, by outcome (succeeded, failed).',
    labelNames: ['outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly webhookQueueDepth = new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Webhook deliveries pending (the last count the database gave; 0 until the queue runs).',
    registers: [this.registry],
  });

  private webhookOldestPendingAt: Date | null = null;
  private readonly webhookOldestPending = new Gauge({
    name: 'webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest pending webhook delivery (from the last count the database gave; 0: none pending).',
    registers: [this.registry],
    collect: () => {
      const oldest = this.webhookOldestPendingAt;
      this.webhookOldestPending.set(oldest === null ? 0 : Math.max(0, (Date.now() - oldest.getTime()) / 1000));
    },
  });

  /** The histogram's child per label set, so an observation does not hash its labels again. */
  private readonly durationSeries = new Map<string, { observe(value: number): void }>();
  private readonly scrapeHooks: (() => void)[] = [];

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // Series exist from the start at 0, so rates and alerts work before the first event.
    for (const plan of [...PLANS, 'anonymous']) {
      this.rateLimitRejections.inc({ plan, code: 'rate_limit_exceeded' }, 0);
      this.rateLimitBans.inc({ plan }, 0);
    }
    for (const kind of ['unavailable', 'query'] as const) this.databaseErrors.inc({ kind }, 0);
    for (const reason of API_KEY_REFUSAL_REASONS) this.apiKeyRefusals.inc({ reason }, 0);
    for (const reason of ADMIN_TOKEN_REFUSAL_REASONS) this.adminTokenRefusals.inc({ reason }, 0);
  }

  /** Counts one API key lookup query. */
  apiKeyLookup(): void {
    this.apiKeyLookups.inc();
  }

  /** Counts a refused bearer key. */
  apiKeyRefused(reason: ApiKeyRefusalReason): void {
    this.apiKeyRefusals.inc({ reason });
  }

  /** Counts one admin token lookup query. */
  adminTokenLookup(): void {
    this.adminTokenLookups.inc();
  }

  /** Counts a refused well-formed admin token. */
  adminTokenRefused(reason: AdminTokenRefusalReason): void {
    this.adminTokenRefusals.inc({ reason });
  }

  /** Counts a 429: `plan` is the key's plan, or 'anonymous' for requests limited per address. */
  rateLimitRejected(plan: string, code: RateLimitRejection = 'rate_limit_exceeded'): void {
    this.rateLimitRejections.inc({ plan, code });
  }

  /** Counts a ban that starts now: `plan` is the key's plan, or 'anonymous' for a client address. */
  rateLimitBanStarted(plan: string): void {
    this.rateLimitBans.inc({ plan });
  }

  databaseError(kind: DatabaseErrorKind): void {
    this.databaseErrors.inc({ kind });
  }

  /** Counts a Redis failure; `source` names the component, e.g. 'rate-limit' or 'readiness'. */
  redisError(source: string): void {
    this.redisErrors.inc({ source });
  }

  /**
   * Reports, at every scrape, whether rate limits are counted in Redis (1) or per instance while
   * Redis cannot answer (0): `rate_limit_redis_shared`, present only when Redis is configured.
   */
  rateLimitSharing(shared: () => boolean): void {
    new Gauge({
      name: 'rate_limit_redis_shared',
      help: 'Whether rate-limit counters are shared through Redis (1) or counted per instance because Redis cannot answer (0).',
      registers: [this.registry],
      collect() {
        this.set(shared() ? 1 : 0);
      },
    });
  }

  /** Counts `count` secrets of a leaked-key report from `source` that had `outcome` (0: makes the series exist). */
  leakedKeysReported(source: string, outcome: string, count = 1): void {
    this.leakedKeyReports.inc({ source, outcome }, count);
  }

  /** Counts a leaked-key report refused whole, by the code it was answered with. */
  /** One attempt of a webhook delivery, its outcome and how long it took. */
  webhookAttempt(event: string, outcome: 'succeeded' | 'retrying' | 'failed', seconds: number): void {
    this.webhookDeliveries.inc({ event, outcome });
    this.webhookAttemptDuration.observe({ outcome: outcome === 'succeeded' ? 'succeeded' : 'failed' }, seconds);
  }

  /** The pending webhook deliveries as last counted: how many, and since when the oldest waits. */
  webhookQueue(depth: number, oldest: Date | null): void {
    this.webhookQueueDepth.set(depth);
    this.webhookOldestPendingAt = oldest;
  }

  leakedKeyReportRefused(source: string, code: string): void {
    this.leakedKeyReportRefusals.inc({ source, code });
  }

  /** A write of usage per key succeeded: `rows` key-hours holding `requests` requests. */
  usageFlushed(rows: number, requests: number): void {
    this.usageFlushRows.inc(rows);
    this.usageFlushRequests.inc(requests);
  }

  usageFlushFailed(): void {
    this.usageFlushFailures.inc();
  }

  /**
   * Reports, at every scrape, the seconds since this instance last wrote its usage counts (or
   * found none to write): `usage_flush_lag_seconds`, about USAGE_FLUSH_MS at most while writes succeed.
   */
  usageFlushLag(seconds: () => number): void {
    new Gauge({
      name: 'usage_flush_lag_seconds',
      help: 'Seconds since this instance last wrote its usage per key (or had none to write); grows while writes fail.',
      registers: [this.registry],
      collect() {
        this.set(seconds());
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every metric, after the hooks of beforeScrape(). */
  render(): Promise<string> {
    for (const hook of this.scrapeHooks) hook();
    return this.registry.metrics();
  }

  /** Runs `hook` before each scrape: whoever holds observations back applies them first. */
  beforeScrape(hook: () => void): void {
    this.scrapeHooks.push(hook);
  }

  /** An admin API request is over (never a public one: those are observeRequest's). */
  adminRequestFinished(method: string, route: string, status: number): void {
    this.adminRequests.inc({ method, route, status_code: String(status) });
  }

  /** A request arrived (called by the request edge before routing, so early refusals count too). */
  requestStarted(): void {
    this.requestsInFlight += 1;
  }

  /** A request is over (its duration is observed with observeRequest). */
  requestEnded(): void {
    this.requestsInFlight -= 1;
  }

  /**
   * A finished request's duration by method, route template and status. `status` undefined: the
   * client went away before the response was complete, counted as 499 (nginx's "client closed
   * request").
   */
  observeRequest(method: string, route: string, status: number | undefined, seconds: number): void {
    const code = status ?? 499;
    const labels = `${method} ${route} ${code}`;
    let series = this.durationSeries.get(labels);
    if (series === undefined) {
      series = this.requestDuration.labels({ method, route, status_code: String(code) });
      // Methods, route templates and statuses are each a small set (Node's parser accepts only
      // known methods), so this stays small; the bound is a guard, not a limit expected to bite.
      if (this.durationSeries.size < MAX_CACHED_SERIES) this.durationSeries.set(labels, series);
    }
    series.observe(seconds);
  }
}

/** Key verification's events as metrics (AuthObserver, provided by MetricsModule). */
export class AuthMetrics extends AuthObserver {
  constructor(private readonly metrics: MetricsService) {
    super();
  }

  lookup(): void {
    this.metrics.apiKeyLookup();
  }

  refused(reason: ApiKeyRefusalReason): void {
    this.metrics.apiKeyRefused(reason);
  }

  adminTokenLookup(): void {
    this.metrics.adminTokenLookup();
  }

  adminTokenRefused(reason: AdminTokenRefusalReason): void {
    this.metrics.adminTokenRefused(reason);
  }
}

/** Label sets whose histogram child is kept (prom-client hashes the labels on every observe otherwise). */
const MAX_CACHED_SERIES = 1000;
