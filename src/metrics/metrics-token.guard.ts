import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { ApiError } from '../errors/api-error.js';
import { metricsConfig, type MetricsConfig } from '../config/metrics.config.js';

/**
 * With METRICS_TOKEN set, /metrics answers only `Authorization: Bearer <METRICS_TOKEN>`
 * (Prometheus: `authorization: {credentials: ...}` in the scrape config). Without it, /metrics
 * is open, for scrapers on a private network.
 */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expected?: Buffer;

  constructor(@Inject(metricsConfig.token) config: MetricsConfig) {
    if (config.metricsToken) this.expected = digest(config.metricsToken);
  }

  canActivate(context: ExecutionContext): boolean {
    checkMetricsToken(context.switchToHttp().getRequest<Request>().headers.authorization, this.expected);
    return true;
  }
}

/** Throws the 401 unless `header` carries the token whose digest is `expected` (none: open). */
export function checkMetricsToken(header: string | undefined, expected: Buffer | undefined): void {
  if (!expected) return;
  if (header === undefined || header.trim() === '') {
    throw new ApiError('missing_api_key', 'The metrics endpoint needs "Authorization: Bearer <metrics token>".');
  }
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  // Digests have equal length whatever was sent, so the comparison is constant-time.
  if (!match || !timingSafeEqual(digest(match[1]), expected)) {
    throw new ApiError('invalid_api_key', 'The metrics token is not valid.');
  }
}

export function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
