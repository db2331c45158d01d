import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PrismaClient } from '../generated/prisma/client.js';
import { DATABASE } from './prisma.tokens.js';
import type { Database } from './database.js';

/**
 * The one Prisma client of the process; the repositories reach the database only through it (its
 * `database` runs the statements of a repository's own SQL, Database.query).
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private engineLoad?: Promise<void>;

  constructor(@Inject(DATABASE) readonly database: Database) {
    super({ adapter: database.adapter });
  }

  /**
   * Starts loading Prisma's query engine while the app starts. Requests rarely go through Prisma
   * (an Idempotency-Key's claim, the purge of expired keys), so without this the first of them,
   * possibly minutes into serving, pays the engine's load in latency and the process's memory
   * steps up then (the bench's soak, BENCH_SOAK=1, shows the step). Not awaited: the engine compiles while the
   * app connects and listens, so readiness does not wait for it, and a request that needs it
   * sooner waits inside Prisma for the same load. No connection is opened here: the app still
   * starts while the database is down.
   */
  onModuleInit(): void {
    this.engineLoad = this.$connect().catch((err: unknown) =>
      this.logger.warn(`Prisma's query engine did not load at start: ${(err as Error)?.message ?? err}`),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    try {
      await this.engineLoad;
      await this.$disconnect();
    } finally {
      await this.database.close();
      this.logger.log(`closed ${this.database.kind} database`);
    }
  }
}
