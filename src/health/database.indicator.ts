import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import type { Database } from '../database/database.js';
import { DATABASE } from '../database/prisma.tokens.js';

/** The database answers a query on the health check's own connection. */
@Injectable()
export class DatabaseIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @Inject(DATABASE) private readonly db: Database,
  ) {}

  async check(timeoutMs: number): Promise<HealthIndicatorResult<'database'>> {
    return await this.indicators
      .check('database')
      .attempt(async () => {
        await this.db.withRunner((sql) => sql.query('SELECT 1'));
      })
      .withTimeout(timeoutMs);
  }
}
