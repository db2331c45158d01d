import { userInfo } from 'node:os';
import { AdminTokensRepository } from '../admin-tokens/admin-tokens.repository.js';
import { AdminTokensService, type AdminTokenInfo } from '../admin-tokens/admin-tokens.service.js';
import { ApiKeysRepository } from '../api-keys/api-keys.repository.js';
import { ApiKeyInfo, ApiKeysService } from '../api-keys/api-keys.service.js';
import type { ChainVerdict } from '../audit/audit-chain.js';
import { AuditLogRepository } from '../audit/audit-log.repository.js';
import { AuditLogService } from '../audit/audit-log.service.js';
import type { Actor } from '../audit/audit.js';
import type { ApiKeysConfig } from '../config/api-keys.config.js';
import { describeDatabaseUrl, type DatabaseConfig } from '../config/database.config.js';
import type { Database } from '../database/database.js';
import { openDatabase } from '../database/open-database.js';
import { PrismaService } from '../database/prisma.service.js';
import type { RuntimeConfig } from '../config/runtime.config.js';
import type { WebhooksConfig } from '../config/webhooks.config.js';
import { KeyUsageRepository } from '../usage/key-usage.repository.js';
import type { UsageQuery } from '../usage/usage-query.js';
import { UsageService, type UsagePeriod } from '../usage/usage.service.js';
import { toolKeyEventSink } from '../webhooks/tool-key-events.js';
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
  | { kind: 'set-scopes'; info: ApiKeyInfo }
  | { kind: 'update'; info: ApiKeyInfo }
  | { kind: 'admin-create'; info: AdminTokenInfo; token: string }
  | { kind: 'admin-list'; tokens: AdminTokenInfo[] }
  | { kind: 'admin-revoke'; info: AdminTokenInfo; alreadyRevoked: boolean }
  | { kind: 'audit-verify'; verdict: ChainVerdict }
  | { kind: 'usage'; id: bigint; query: UsageQuery; periods: UsagePeriod[] };

/** The key (or admin token) an operation names does not exist. */
export class NoSuchKeyError extends Error {
  constructor(id: bigint, what = 'API key') {
    super(`no ${what} has id ${id}`);
  }
}

/** What APIKEY_ACTOR may hold: a person's name or login as the audit log shows it after `cli:`. */
export const ACTOR_NAME = /^[A-Za-z0-9._@-]{1,64}$/;

/**
 * The audit log's actor for the key tool, written cli:<user>: `named` (APIKEY_ACTOR, the person an
 * operator says runs it, as inside a container where every user is `node`), else the
 * operating-system user who runs it (the uid when the user has no name).
 */
export function cliActor(named?: string): Actor {
  if (named !== undefined) return { kind: 'key_tool', user: named };
  try {
    return { kind: 'key_tool', user: userInfo().username };
  } catch {
    return { kind: 'key_tool', user: `uid-${process.getuid?.() ?? 'unknown'}` };
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

/** The keys, their usage and the admin tokens of the configured database, through the server's own services. */
export interface KeyStore {
  keys: ApiKeysService;
  tokens: AdminTokensService;
  usage: UsageService;
  audit: AuditLogService;
  close(): Promise<void>;
}

/**
 * Opens the database the configuration selects, as the server does (the embedded DATA_DIR is
 * locked and migrated; `notes` receives the migration notes).
 */
export async function openKeyStore(
  config: { database: DatabaseConfig; apiKeys: ApiKeysConfig; runtime: RuntimeConfig; webhooks: WebhooksConfig },
  notes: (msg: string) => void,
): Promise<KeyStore> {
  const db = await openDatabase(config.database, notes, 'apikey tool');
  if (config.database.databaseUrl !== undefined) await probe(db, describeDatabaseUrl(config.database.databaseUrl));
  const prisma = new PrismaService(db);
  const keys = new ApiKeysRepository(prisma);
  return {
    // Key changes are announced to webhook endpoints as the service announces them.
    keys: new ApiKeysService(
      keys,
      new AuditLogRepository(prisma),
      config.apiKeys,
      undefined,
      toolKeyEventSink(prisma, config),
    ),
    tokens: new AdminTokensService(new AdminTokensRepository(prisma), new AuditLogRepository(prisma), config.apiKeys),
    usage: new UsageService(new KeyUsageRepository(prisma), keys),
    audit: new AuditLogService(new AuditLogRepository(prisma)),
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

export async function perform(
  op: Operation,
  { keys, tokens, usage, audit }: Pick<KeyStore, 'keys' | 'tokens' | 'usage' | 'audit'>,
  actor: Actor,
): Promise<Outcome> {
  switch (op.kind) {
    case 'create':
      return { kind: 'create', ...(await keys.create(op, actor)) };
    case 'list':
      return { kind: 'list', keys: await keys.list(), now: new Date() };
    case 'roll': {
      const rolled = await keys.roll(op.id, op.overlapMs, actor);
      if (!rolled) throw new NoSuchKeyError(op.id);
      return { kind: 'roll', ...rolled };
    }
    case 'revoke': {
      const done = await keys.revoke(op.id, actor);
      if (!done) throw new NoSuchKeyError(op.id);
      return { kind: 'revoke', ...done };
    }
    case 'set-plan': {
      const info = await keys.setPlan(op.id, op.plan, op.perMinute, op.perDay, actor);
      if (!info) throw new NoSuchKeyError(op.id);
      return { kind: 'set-plan', info };
    }
    case 'set-scopes': {
      const info = await keys.setScopes(op.id, op.scopes, actor);
      if (!info) throw new NoSuchKeyError(op.id);
      return { kind: 'set-scopes', info };
    }
    case 'update': {
      const { kind: _kind, id, json: _json, ...change } = op;
      const info = await keys.update(id, change, actor);
      if (!info) throw new NoSuchKeyError(id);
      return { kind: 'update', info };
    }
    case 'admin-create':
      return { kind: 'admin-create', ...(await tokens.create(op.name, actor)) };
    case 'admin-list':
      return { kind: 'admin-list', tokens: await tokens.list() };
    case 'admin-revoke': {
      const done = await tokens.revoke(op.id, actor);
      if (!done) throw new NoSuchKeyError(op.id, 'admin token');
      return { kind: 'admin-revoke', ...done };
    }
    case 'audit-verify':
      return { kind: 'audit-verify', verdict: await audit.verify() };
    case 'usage': {
      const periods = await usage.usage(op.id, op.query);
      if (!periods) throw new NoSuchKeyError(op.id);
      return { kind: 'usage', id: op.id, query: op.query, periods };
    }
  }
}
