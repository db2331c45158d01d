import { Global, Logger, Module } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Database, openDatabase } from './database.js';
import { PrismaService } from './prisma.service.js';
import { DATABASE } from './prisma.tokens.js';

@Global()
@Module({
  providers: [
    {
      provide: DATABASE,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig): Promise<Database> => {
        const logger = new Logger('Database');
        logger.log(config.databaseUrl ? 'using PostgreSQL at DATABASE_URL' : `using the embedded database in ${config.dataDir}`);
        return openDatabase(config, (m) => logger.log(m), 'animal-store server');
      },
    },
    PrismaService,
  ],
  exports: [PrismaService, DATABASE],
})
export class PrismaModule {}
