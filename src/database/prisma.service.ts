import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { PrismaClient } from '../generated/prisma/client.js';
import { DATABASE } from './prisma.tokens.js';
import type { Database } from './database.js';

/**
 * The one Prisma client of the process; services reach the database only through it (its
 * `database` runs the statements of the service's own SQL, Database.query).
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');

  constructor(@Inject(DATABASE) readonly database: Database) {
    super({ adapter: database.adapter });
  }

  async onApplicationShutdown(): Promise<void> {
    try {
      await this.$disconnect();
    } finally {
      await this.database.close();
      this.logger.log(`closed ${this.database.kind} database`);
    }
  }
}
