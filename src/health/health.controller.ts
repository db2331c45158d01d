import { Controller, Get } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult } from '@nestjs/terminus';
import { Public } from '../auth/public.decorator.js';
import { DB_RETRY_AFTER_SECONDS } from '../errors/database-errors.js';
import { ApiError } from '../errors/api-error.js';
import { HealthService } from './health.service.js';

/**
 * Liveness and readiness for the load balancer and orchestrator; outside /v1, no API key,
 * not rate limited.
 *
 * - /healthz: the process is up and its event loop answers. It checks no dependency, since
 *   restarting the process would not bring a database back.
 * - /readyz: this instance should receive traffic: not shutting down, the database answers,
 *   every migration on disk is applied, and Redis (when configured) answers PING. A Redis outage
 *   reports `degraded` with 200: the rate limiter then counts per instance and the service
 *   keeps serving (docs/api.md, "Rate limits"); failing readiness on every instance at once would
 *   turn a Redis outage into a full one. Every other failure is 503 service_unavailable with
 *   Retry-After, in the Error body. The body names what failed, never how (that is logged).
 */
@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('healthz')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  @HealthCheck({ noCache: true, swaggerDocumentation: false })
  async ready(): Promise<HealthCheckResult> {
    const readiness = await this.health.readiness();
    switch (readiness.status) {
      case 'ready':
        return readiness.result;
      case 'shutting-down':
        throw unavailable('The instance is shutting down.');
      case 'not-ready':
        throw unavailable(`The instance is not ready: ${readiness.reasons.join('; ')}.`);
    }
  }
}

function unavailable(message: string): ApiError {
  return new ApiError('service_unavailable', message, {
    headers: { 'Retry-After': String(DB_RETRY_AFTER_SECONDS) },
  });
}
