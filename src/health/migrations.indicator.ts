import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import type { Database } from '../database/database.js';
import { pendingMigrations } from '../database/migrator.js';
import { DATABASE } from '../database/prisma.tokens.js';

/**
 * How a failed check's message starts when it reached the database and found migrations to
 * apply; any other failure means the check could not read the database.
 */
export const PENDING_MIGRATIONS = 'pending: ';

/** Every migration on disk is applied to the database. */
@Injectable()
export class MigrationsIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(DATABASE) private readonly db: Database,
    @Inject(databaseConfig.token) private readonly config: DatabaseConfig,
  ) {}

  async check(timeoutMs: number): Promise<HealthIndicatorResult<'migrations'>> {
    return await this.indicators
      .check('migrations')
      .attempt(async () => {
        const pending = await this.db.withRunner((sql) => pendingMigrations(sql, this.config.migrationsDir));
        if (pending.length > 0) throw new Error(`${PENDING_MIGRATIONS}${pending.join(', ')}`);
      })
      .withTimeout(timeoutMs);
  }
}
