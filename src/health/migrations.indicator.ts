import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import type { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { Database } from '../database/database.js';
import { pendingMigrations } from '../database/migrator.js';
import { DATABASE } from '../database/prisma.tokens.js';

/** Every migration on disk is applied to the database. */
@Injectable()
export class MigrationsIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(DATABASE) private readonly db: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async check(timeoutMs: number): Promise<HealthIndicatorResult<'migrations'>> {
    return await this.indicators
      .check('migrations')
      .attempt(async () => {
        const pending = await this.db.withRunner((sql) => pendingMigrations(sql, this.config.migrationsDir));
        if (pending.length > 0) throw new Error(`pending: ${pending.join(', ')}`);
      })
      .withTimeout(timeoutMs);
  }
}
