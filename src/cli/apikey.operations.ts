import { ApiKeysRepository } from '../auth/api-keys.repository.js';
import { ApiKeyInfo, ApiKeysService } from '../auth/api-keys.service.js';
import type { ApiKeysConfig } from '../config/api-keys.config.js';
import { describeDatabaseUrl, type DatabaseConfig } from '../config/database.config.js';
import { openDatabase, type Database } from '../database/database.js';
import { PrismaService } from '../database/prisma.service.js';
import { KeyUsageRepository } from '../usage/key-usage.repository.js';
import { UsageService, type UsagePeriod, type UsageQuery } from '../usage/usage.service.js';
import type { Command } from './apikey.args.js';

/** A command the tool runs against the database (everything but help). */
export type Operation = Exclude<Command, { kind: 'help' }>;

/** What an operation did, for the output to show. */
export type Outcome =
  | { kind: 'create'; info: ApiKeyInfo; key: string }
  | { kind: 'list'; keys: ApiKeyInfo[]; now: Date }
  | { kind: 'roll'; info: ApiKeyInfo; key: string }
  | { kind: 'revoke'; info: ApiKeyInfo; alreadyRevoked: boolean }
  | { kind: 'set-plan'; info: ApiKeyInfo }
  | { kind: 'usage'; id: bigint; query: UsageQuery; periods: UsagePeriod[] };

/** The key an operation names does not exist. */
export class NoSuchKeyError extends Error {
  constructor(id: bigint) {
    super(`no API key has id ${id}`);
  }
}

/** PostgreSQL did not answer the tool's first statement: `where` is its host, port and database. */
export class DatabaseUnreachableError extends Error {
  constructor(
    readonly where: string,
    override readonly cause: unknown,
  ) {
    super(`cannot reach the database at ${where}`);
  }
}

/** The api_keys and key_usage tables of the configured database, as the server's own services reach them. */
export interface KeyStore {
  keys: ApiKeysService;
  usage: UsageService;
  close(): Promise<void>;
}

/**
 * Opens the database the configuration selects, as the server does (the embedded DATA_DIR is
 * locked and migrated; `notes` receives the migration notes).
 */
export async function openKeyStore(
  config: { database: DatabaseConfig; apiKeys: ApiKeysConfig },
  notes: (msg: string) => void,
): Promise<KeyStore> {
  const db = await openDatabase(config.database, notes, 'apikey tool');
  if (config.database.databaseUrl !== undefined) await probe(db, describeDatabaseUrl(config.database.databaseUrl));
  const prisma = new PrismaService(db);
  const keys = new ApiKeysRepository(prisma);
  return {
    keys: new ApiKeysService(keys, config.apiKeys),
    usage: new UsageService(new KeyUsageRepository(prisma), keys),
    async close() {
      try {
        await prisma.$disconnect();
      } finally {
        await db.close();
      }
    },
  };
}

/** One statement before any work, so an unreachable server is told apart from a failed operation. */
async function probe(db: Database, where: string): Promise<void> {
  try {
    await db.withRunner((runner) => runner.query('SELECT 1'));
  } catch (err) {
    await db.close().catch(() => undefined);
    throw new DatabaseUnreachableError(where, err);
  }
}

export async function perform(op: Operation, { keys, usage }: Pick<KeyStore, 'keys' | 'usage'>): Promise<Outcome> {
  switch (op.kind) {
    case 'create':
      return { kind: 'create', ...(await keys.create(op)) };
    case 'list':
      return { kind: 'list', keys: await keys.list(), now: new Date() };
    case 'roll': {
      const rolled = await keys.roll(op.id, op.overlapMs);
      if (!rolled) throw new NoSuchKeyError(op.id);
      return { kind: 'roll', ...rolled };
    }
    case 'revoke': {
      const done = await keys.revoke(op.id);
      if (!done) throw new NoSuchKeyError(op.id);
      return { kind: 'revoke', ...done };
    }
    case 'set-plan': {
      const info = await keys.setPlan(op.id, op.plan, op.perMinute, op.perDay);
      if (!info) throw new NoSuchKeyError(op.id);
      return { kind: 'set-plan', info };
    }
    case 'usage': {
      const periods = await usage.usage(op.id, op.query);
      if (!periods) throw new NoSuchKeyError(op.id);
      return { kind: 'usage', id: op.id, query: op.query, periods };
    }
  }
}
