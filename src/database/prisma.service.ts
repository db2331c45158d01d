import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PrismaClient } from '../generated/prisma/client.js';
import { DATABASE } from './prisma.tokens.js';
import type { Database } from './database.js';

/**
 * The one Prisma client of the process; services reach the database only through it (its
 * `database` runs the statements of the service's own SQL, Database.query).
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Database');

  constructor(@Inject(DATABASE) readonly database: Database) {
    super({ adapter: database.adapter });
  }

  /**
   * Loads Prisma's query engine before the app reports ready. Requests rarely go through Prisma
   * (an Idempotency-Key's claim, the purge of expired keys), so without this the first of them,
   * possibly minutes into serving, pays the engine's load in latency and the process's memory
   * steps up then (docs/performance.md, "The soak"). No connection is opened here: the app
   * still starts while the database is down.
   */
  async onModuleInit(): Promise<void> {
    await this.$connect();
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
