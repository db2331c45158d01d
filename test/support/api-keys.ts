import { ApiKeysService, NewApiKey } from '../../src/auth/api-keys.service.js';
import { openEmbedded, openPostgres } from '../../src/database/database.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import type { TestDatabase } from './databases.js';

/**
 * Issues an API key directly in a test database while no app has it open (for tests of the
 * built service as a process). Enterprise with limits no test reaches, unless told otherwise.
 */
export async function issueApiKeyIn(db: Pick<TestDatabase, 'config'>, input: Partial<NewApiKey> = {}): Promise<{ id: string; key: string }> {
  const config = db.config();
  const database = config.database.databaseUrl
    ? openPostgres(config.database)
    : await openEmbedded(config.database, () => {}, 'test key issuer');
  const prisma = new PrismaService(database);
  try {
    const plan = input.plan ?? 'enterprise';
    const limits = plan === 'enterprise' ? { perMinute: 1_000_000_000, perDay: 2_000_000_000 } : {};
    const { info, key } = await new ApiKeysService(prisma, config.apiKeys).create({ name: 'test key', plan, ...limits, ...input });
    return { id: info.id.toString(), key };
  } finally {
    await prisma.$disconnect();
    await database.close();
  }
}
