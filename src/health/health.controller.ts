import { Controller, Get, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';
import { ApiError } from '../common/api-error.js';
import type { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { Database } from '../prisma/database.js';
import { pendingMigrations } from '../prisma/migrator.js';
import { DATABASE } from '../prisma/prisma.tokens.js';

/** Liveness and readiness for the load balancer; outside /v1, unauthenticated. */
@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('healthz')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  async ready(): Promise<{ status: 'ready'; database: 'up'; migrations: 'applied' }> {
    let pending: string[];
    try {
      pending = await this.db.withRunner((sql) => pendingMigrations(sql, this.config.migrationsDir));
    } catch {
      throw new ApiError(503, 'service_unavailable', 'The database is unreachable.', undefined, { 'Retry-After': '5' });
    }
    if (pending.length > 0) {
      throw new ApiError(503, 'service_unavailable', `Migrations not applied: ${pending.join(', ')}.`, undefined, {
        'Retry-After': '5',
      });
    }
    return { status: 'ready', database: 'up', migrations: 'applied' };
  }
}
