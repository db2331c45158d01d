import { parseArgs } from 'node:util';
import { ApiKeyInfo, ApiKeyInputError, ApiKeysService, checkName, checkPlan } from '../auth/api-keys.service.js';
import type { Plan } from '../auth/auth.types.js';
import { MAX_CUSTOM_LIMIT } from '../auth/plans.js';
import { AppConfig, ConfigError, loadConfig } from '../config/config.js';
import type { DatabaseConfig } from '../config/database.config.js';
import { isDatabaseUnavailable } from '../errors/database-errors.js';
import { DataDirLockedError } from '../database/data-dir-lock.js';
import { Database, openEmbedded, openPostgres } from '../database/database.js';
import { PrismaService } from '../database/prisma.service.js';

/**
 * The key tool: `npm run apikey -- <command>`. Issues, lists, revokes and re-plans API keys in
 * the database the configuration selects (DATABASE_URL, else the embedded DATA_DIR, which it
 * locks like the server does). Exit codes: 0 done, 1 failed, 2 bad arguments, 78 bad config.
 */
export const USAGE = `Usage: npm run apikey -- <command> [options]

Commands:
  create --name NAME --plan PLAN [--per-minute N --per-day N] [--json]
        Issue a key. The key is shown once; only its hash is stored.
  list [--json]
        All keys in order of creation (never the key itself).
  revoke ID [--json]
        Revoke a key; every instance refuses it within API_KEY_CACHE_TTL_MS (under 5 s).
  set-plan ID PLAN [--per-minute N --per-day N] [--json]
        Move a key to another plan.

PLAN is free (60/min, 1000/day), pro (300/min, 10000/day), business (1000/min,
100000/day) or enterprise, which needs its own --per-minute and --per-day.
--json prints one JSON value on one line.

The database is DATABASE_URL when set, else the embedded database in DATA_DIR (which
must not be in use by a running server).
`;

export class UsageError extends Error {}

export type Command =
  | { kind: 'help' }
  | { kind: 'create'; name: string; plan: Plan; perMinute?: number; perDay?: number; json: boolean }
  | { kind: 'list'; json: boolean }
  | { kind: 'revoke'; id: bigint; json: boolean }
  | { kind: 'set-plan'; id: bigint; plan: Plan; perMinute?: number; perDay?: number; json: boolean };

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

const LIMIT_OPTIONS: OptionSpec = { 'per-minute': { type: 'string' }, 'per-day': { type: 'string' } };
const COMMANDS: Record<string, { options: OptionSpec; positionals: string[] }> = {
  create: { options: { name: { type: 'string' }, plan: { type: 'string' }, ...LIMIT_OPTIONS }, positionals: [] },
  list: { options: {}, positionals: [] },
  revoke: { options: {}, positionals: ['ID'] },
  'set-plan': { options: LIMIT_OPTIONS, positionals: ['ID', 'PLAN'] },
};

function limit(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > MAX_CUSTOM_LIMIT) {
    throw new UsageError(`--${flag} must be a whole number from 1 to ${MAX_CUSTOM_LIMIT}, got "${raw}"`);
  }
  return Number(raw);
}

function keyId(raw: string): bigint {
  if (!/^[1-9][0-9]{0,18}$/.test(raw) || BigInt(raw) > 9223372036854775807n) {
    throw new UsageError(`ID must be the number of a key (see list), got "${raw}"`);
  }
  return BigInt(raw);
}

/** Parses the tool's arguments; throws UsageError for anything it cannot run. */
export function parseCommand(argv: string[]): Command {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError('a command is required');
  if (name === 'help' || name === '--help' || name === '-h') return { kind: 'help' };
  const spec = COMMANDS[name];
  if (!spec) throw new UsageError(`unknown command "${name}"`);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...spec.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals, tokens } = parsed;
  if (values.help) return { kind: 'help' };
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
    seen.add(token.name);
  }
  if (positionals.length !== spec.positionals.length) {
    const want = spec.positionals.length === 0 ? 'no arguments' : spec.positionals.join(' ');
    throw new UsageError(`${name} takes ${want}, got ${positionals.length === 0 ? 'none' : positionals.map((p) => `"${p}"`).join(' ')}`);
  }
  const json = values.json === true;
  const str = (key: string): string | undefined => (values as Record<string, string | boolean | undefined>)[key] as string | undefined;
  try {
    switch (name) {
      case 'create': {
        const keyName = str('name');
        const plan = str('plan');
        if (keyName === undefined) throw new UsageError('create needs --name');
        if (plan === undefined) throw new UsageError('create needs --plan');
        const limits = checkPlan(plan, limit('per-minute', str('per-minute')), limit('per-day', str('per-day')));
        return { kind: 'create', name: checkName(keyName), ...withLimits(limits), json };
      }
      case 'list':
        return { kind: 'list', json };
      case 'revoke':
        return { kind: 'revoke', id: keyId(positionals[0]), json };
      default: {
        const id = keyId(positionals[0]);
        const limits = checkPlan(positionals[1], limit('per-minute', str('per-minute')), limit('per-day', str('per-day')));
        return { kind: 'set-plan', id, ...withLimits(limits), json };
      }
    }
  } catch (err) {
    if (err instanceof ApiKeyInputError) throw new UsageError(err.message);
    throw err;
  }
}

function withLimits(l: { plan: Plan; perMinute: number | null; perDay: number | null }) {
  return { plan: l.plan, perMinute: l.perMinute ?? undefined, perDay: l.perDay ?? undefined };
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

const processIo: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
};

/** A key as the tool shows it: never the secret or its hash. Ids are small, so JSON numbers. */
function toJson(info: ApiKeyInfo) {
  return {
    id: Number(info.id),
    name: info.name,
    plan: info.plan,
    perMinute: info.perMinute,
    perDay: info.perDay,
    prefix: info.prefix,
    createdAt: info.createdAt.toISOString(),
    lastUsedAt: info.lastUsedAt?.toISOString() ?? null,
    revokedAt: info.revokedAt?.toISOString() ?? null,
  };
}

function describe(info: ApiKeyInfo): string {
  return `${info.id} "${info.name}" (plan ${info.plan}: ${info.perMinute}/minute, ${info.perDay}/day)`;
}

function table(keys: ApiKeyInfo[]): string {
  const rows = [
    ['ID', 'NAME', 'PLAN', 'PER_MINUTE', 'PER_DAY', 'PREFIX', 'CREATED', 'LAST_USED', 'STATUS'],
    ...keys.map((k) => [
      String(k.id),
      k.name,
      k.plan,
      String(k.perMinute),
      String(k.perDay),
      `${k.prefix}…`,
      k.createdAt.toISOString(),
      k.lastUsedAt?.toISOString() ?? '-',
      k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active',
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...r[i]].length)));
  return rows.map((r) => r.map((c, i) => c + ' '.repeat(widths[i] - [...c].length)).join('  ').trimEnd()).join('\n') + '\n';
}

class Failure extends Error {}

async function execute(cmd: Exclude<Command, { kind: 'help' }>, keys: ApiKeysService, io: Io): Promise<void> {
  const print = (value: unknown) => io.out(`${JSON.stringify(value)}\n`);
  switch (cmd.kind) {
    case 'create': {
      const { info, key } = await keys.create(cmd);
      if (cmd.json) return print({ ...toJson(info), key });
      io.out(`Issued API key ${describe(info)}.\nThe key is shown only now; store it safely:\n\n${key}\n\n`);
      return;
    }
    case 'list': {
      const all = await keys.list();
      if (cmd.json) return print(all.map(toJson));
      io.out(all.length === 0 ? 'No API keys.\n' : table(all));
      return;
    }
    case 'revoke': {
      const done = await keys.revoke(cmd.id);
      if (!done) throw new Failure(`no API key has id ${cmd.id}`);
      if (cmd.json) return print({ ...toJson(done.info), alreadyRevoked: done.alreadyRevoked });
      io.out(
        done.alreadyRevoked
          ? `API key ${describe(done.info)} was already revoked (${done.info.revokedAt?.toISOString()}).\n`
          : `Revoked API key ${describe(done.info)}; every instance refuses it within seconds.\n`,
      );
      return;
    }
    case 'set-plan': {
      const info = await keys.setPlan(cmd.id, cmd.plan, cmd.perMinute, cmd.perDay);
      if (!info) throw new Failure(`no API key has id ${cmd.id}`);
      if (cmd.json) return print(toJson(info));
      io.out(`API key ${describe(info)} updated.\n`);
      return;
    }
  }
}

async function open(config: DatabaseConfig, io: Io): Promise<Database> {
  if (config.databaseUrl) return openPostgres(config);
  // Migration notes go to stderr, so that --json output stays one clean line.
  return openEmbedded(config, (m) => io.err(`${m}\n`), 'apikey tool');
}

/** Runs the tool; resolves to the process exit code. */
export async function runApiKeyTool(argv: string[], io: Io = processIo): Promise<number> {
  let cmd: Command;
  try {
    cmd = parseCommand(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`apikey: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (cmd.kind === 'help') {
    io.out(USAGE);
    return 0;
  }
  let config: AppConfig;
  try {
    config = loadConfig(io.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`configuration error: ${err.message}\n`);
    return 78;
  }
  let db: Database;
  try {
    db = await open(config.database, io);
  } catch (err) {
    io.err(`apikey: ${err instanceof DataDirLockedError ? err.message : `cannot open the database: ${(err as Error).message}`}\n`);
    return 1;
  }
  const prisma = new PrismaService(db);
  try {
    await execute(cmd, new ApiKeysService(prisma, config.apiKeys), io);
    return 0;
  } catch (err) {
    io.err(`apikey: ${explain(err)}\n`);
    return 1;
  } finally {
    await prisma.$disconnect();
    await db.close();
  }
}

function explain(err: unknown): string {
  if (err instanceof Failure || err instanceof ApiKeyInputError) return err.message;
  if ((err as { code?: unknown })?.code === 'P2021') {
    return 'the api_keys table does not exist: apply the migrations first (npm run db:migrate)';
  }
  if (isDatabaseUnavailable(err)) return `cannot reach the database: ${(err as Error).message}`;
  return `failed: ${(err as Error)?.message ?? String(err)}`;
}
