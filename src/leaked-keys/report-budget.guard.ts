import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from '../errors/api-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { clientAddress } from '../rate-limit/rate-limiter.js';
import { RateLimitStore } from '../rate-limit/rate-limit.store.js';
import { retryAfterSeconds } from '../rate-limit/rate-limit.windows.js';
import { Clock } from '../time/clock.js';

/** Reports each client address may send per UTC hour (docs/api-keys.md, "When a key leaks"). */
export const REPORTS_PER_HOUR = 60;
const HOUR_MS = 3_600_000;

/**
 * The budget of POST /v1/credentials/revoke: REPORTS_PER_HOUR requests per client address and
 * fixed UTC hour, counted in the rate limiter's store (Redis when configured, so it holds across
 * instances), apart from any API key's limits; then 429 rate_limit_exceeded with Retry-After. A
 * guard, so a refused request's body is never read.
 */
@Injectable()
export class ReportBudgetGuard implements CanActivate {
  constructor(
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
    private readonly metrics: MetricsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const nowMs = this.clock.now().getTime();
    const result = await this.store.consume({
      subject: `credentials-revoke:${clientAddress(context.switchToHttp().getRequest<Request>())}`,
      nowMs,
      windows: [{ name: 'hour', ttlMs: HOUR_MS, limit: REPORTS_PER_HOUR }],
      banThreshold: Number.MAX_SAFE_INTEGER,
      banMs: 0,
    });
    if (result.outcome === 'allowed') return true;
    this.metrics.leakedKeyReportRefused('credentials_revoke', 'rate_limit_exceeded');
    const retryAfter = retryAfterSeconds(result, nowMs);
    throw new ApiError(
      'rate_limit_exceeded',
      `Too many reports from this client address (${REPORTS_PER_HOUR} per hour); retry after ${retryAfter} seconds.`,
      { headers: { 'Retry-After': String(retryAfter) } },
    );
  }
}
