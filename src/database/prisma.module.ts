import { Global, Logger, Module } from '@nestjs/common';
import { databaseConfig, type DatabaseConfig } from '../config/database.config.js';
import type { Database } from './database.js';
import { openDatabase } from './open-database.js';
import { PrismaService } from './prisma.service.js';
import { DATABASE } from './prisma.tokens.js';

@Global()
@Module({
  providers: [
    {
      provide: DATABASE,
      inject: [databaseConfig.token],
      useFactory: async (config: DatabaseConfig): Promise<Database> => {
        const logger = new Logger('Database');
        logger.log(
          config.databaseUrl ? 'using PostgreSQL at DATABASE_URL' : `using the embedded database in ${config.dataDir}`,
        );
        return openDatabase(config, (m) => logger.log(m), 'animal-store server');
      },
    },
    PrismaService,
  ],
  exports: [PrismaService, DATABASE],
})
export class PrismaModule {}
