import type { INestApplicationContext } from '@nestjs/common';
import { displayPrefix, generateApiKey, hashApiKey } from '../../src/api-keys/api-key-format.js';
import { checkPlan } from '../../src/api-keys/api-key-input.js';
import { ApiKeysRepository } from '../../src/api-keys/api-keys.repository.js';
import { DEFAULT_SCOPES } from '../../src/api-keys/scopes.js';
import { ApiKeysService, NewApiKey } from '../../src/api-keys/api-keys.service.js';
import { AuditLogRepository } from '../../src/audit/audit-log.repository.js';
import type { Actor } from '../../src/audit/audit.js';
import { apiKeysConfig, type ApiKeysConfig } from '../../src/config/api-keys.config.js';
import { MAX_CUSTOM_LIMIT } from '../../src/api-keys/plans.js';
import { openDatabase } from '../../src/database/open-database.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import type { TestDatabase } from './databases.js';

/** The audit log's actor of the keys and tokens tests issue (written system:test). */
export const TEST_ACTOR: Actor = { kind: 'system', name: 'test' };

/**
 * The tests' API keys. Unless told otherwise a key is enterprise with limits no test reaches, so
 * rate limits never get in a test's way.
 */
async function issue(keys: ApiKeysService, input: Partial<NewApiKey>): Promise<{ id: string; key: string }> {
  const plan = input.plan ?? 'enterprise';
  const limits = plan === 'enterprise' ? { perMinute: MAX_CUSTOM_LIMIT, perDay: MAX_CUSTOM_LIMIT } : {};
  const { info, key } = await keys.create({ name: 'test key', plan, ...limits, ...input }, TEST_ACTOR);
  return { id: info.id.toString(), key };
}

/** Issues a key in a running app's database; returns its secret. */
export async function issueApiKey(app: INestApplicationContext, input: Partial<NewApiKey> = {}): Promise<string> {
  return (await issue(app.get(ApiKeysService), input)).key;
}

/** Issues a key directly in a test database while no app has it open (for tests of the built service as a process). */
export async function issueApiKeyIn(
  db: Pick<TestDatabase, 'config'>,
  input: Partial<NewApiKey> = {},
): Promise<{ id: string; key: string }> {
  const config = db.config();
  const database = await openDatabase(config.database, () => {}, 'test key issuer');
  const prisma = new PrismaService(database);
  try {
    return await issue(
      new ApiKeysService(new ApiKeysRepository(prisma), new AuditLogRepository(prisma), config.apiKeys),
      input,
    );
  } finally {
    await prisma.$disconnect();
    await database.close();
  }
}

/**
 * Writes keys straight into a running app's api_keys table, one multi-row insert per thousand,
 * as `ApiKeysService.create` leaves them minus the audit entry and the webhook event: for tests
 * of what the request path does with thousands of keys, not of how a key is issued. Each key is
 * of the format its checksum secret gives (version 1 without one). Returns the secrets in order.
 */
export async function insertApiKeys(
  app: INestApplicationContext,
  keys: { checksumSecret?: string; plan?: string }[],
  createdAt: Date,
): Promise<string[]> {
  const { apiKeyPepper }: ApiKeysConfig = app.get(apiKeysConfig.token);
  const secrets = keys.map((k) => generateApiKey(k.checksumSecret));
  const rows = keys.map((k, i) => ({
    name: `bulk key ${i + 1}`,
    ...checkPlan(k.plan ?? 'business'),
    prefix: displayPrefix(secrets[i]),
    hash: hashApiKey(secrets[i], apiKeyPepper),
    createdAt,
    scopes: [...DEFAULT_SCOPES],
  }));
  const prisma = app.get(PrismaService);
  for (let i = 0; i < rows.length; i += 1000) await prisma.apiKey.createMany({ data: rows.slice(i, i + 1000) });
  return secrets;
}
