import { parseArgs } from 'node:util';
import { ApiKeyInputError, checkName, checkPlan, checkScopes, EXPIRES_AT_FORMAT } from '../api-keys/api-key-input.js';
import { checkAdminTokenName } from '../admin-tokens/admin-token-format.js';
import { PLANS, type Plan } from '../api-keys/plans.js';
import { MAX_CUSTOM_LIMIT } from '../api-keys/plans.js';
import type { Scope } from '../api-keys/scopes.js';
import { parseRfc3339DateTime } from '../time/rfc3339.js';
import { parseUsageQuery, UsageQueryError, type UsageQuery } from '../usage/usage-query.js';

/** The key tool's command line: what it accepts (USAGE) and what it asks for (Command). */
export const USAGE = `Usage: npm run apikey -- <command> [options]

Commands:
  create --name NAME --plan PLAN [--per-minute N --per-day N] [--expires-in DURATION]
         [--scopes SCOPES] [--json]
        Issue a key. The key is shown once; only its hash is stored. With --expires-in
        it is refused (401 api_key_expired) from that long after now on. It may do
        everything (pets:read,pets:write) unless --scopes says less.
  list [--json]
        All keys in order of creation (never the key itself), each with its state
        (active, expiring within 7 days, expired, revoked) and last use.
  roll ID [--overlap DURATION] [--json]
        Give a key a new secret, keeping its id, plan and counters. The old secret keeps
        working for the overlap (default 24h), then gets 401 api_key_expired until the
        next roll. With --overlap 0 it is forgotten at once and gets 401 invalid_api_key,
        as an unknown key does. A version 1 key rolls into a version 2 key.
  revoke ID [--json]
        Revoke a key; every instance refuses it within API_KEY_CACHE_TTL_MS (under 5 s).
  set-plan ID PLAN [--per-minute N --per-day N] [--json]
        Move a key to another plan.
  set-scopes ID SCOPES [--json]
        Replace what a key may do; every instance applies it within API_KEY_CACHE_TTL_MS.
  update ID [--name NAME] [--plan PLAN] [--per-minute N] [--per-day N]
            [--expires-at INSTANT|never] [--scopes SCOPES] [--json]
        Change a key's name, plan, limits, expiry or scopes (an RFC 3339 date-time with
        its offset, such as 2027-01-31T00:00:00Z, or never); what is not given stays. Every instance
        applies it within API_KEY_CACHE_TTL_MS (under 5 s).

  admin create --name NAME [--json]
        Issue an admin token for the admin API (ADMIN_PORT). Shown once; only its hash
        is stored. Names are unique and never reused: the audit log names the token.
        A name may not contain ":" (cli:… and system:… are the key tool and the service).
  admin list [--json]
        All admin tokens (never the token itself) and whether each is revoked.
  admin revoke ID [--json]
        Revoke an admin token; the admin API refuses it from the next request.

  audit verify [--json]
        Check the audit log's hash chain, every entry from the first. Exit code 0 when it
        holds, with the number of entries and the last one's id and hash (record them
        elsewhere: a later run shows whether entries after them were removed); 3 naming
        the first entry that was changed, removed or inserted out of order.

  usage ID --from TIME --to TIME [--granularity hour|day] [--json]
        Requests counted against a key, and how many of them were answered 429, per UTC
        hour (the default) or day, oldest first, for the periods that overlap [from, to).
        TIME is an ISO-8601 date (UTC midnight) or instant with its offset: 2026-11-01,
        2026-11-01T09:00:00Z. At most 1000 periods. Each instance writes its counts
        every USAGE_FLUSH_MS, so the last few seconds may not be in yet.

DURATION is a whole number of seconds, minutes, hours or days: 90s, 30m, 24h, 90d.
PLAN is free (60/min, 1000/day), pro (300/min, 10000/day), business (1000/min,
100000/day) or enterprise, which needs its own --per-minute and --per-day.
SCOPES is a comma-separated list of pets:read (list and get animals) and pets:write
(add animals), e.g. pets:read for a key that only reads; a request outside its scopes
gets 403 insufficient_scope.
--json prints one JSON value on one line.

Every change is recorded in the audit log with the actor cli:<operating-system user>
(kind key_tool).

The database is DATABASE_URL when set, else the embedded database in DATA_DIR (which
must not be in use by a running server).
`;

export class UsageError extends Error {}

export type Command =
  | { kind: 'help' }
  | {
      kind: 'create';
      name: string;
      plan: Plan;
      perMinute?: number;
      perDay?: number;
      expiresInMs?: number;
      scopes?: Scope[];
      json: boolean;
    }
  | { kind: 'list'; json: boolean }
  | { kind: 'roll'; id: bigint; overlapMs: number; json: boolean }
  | { kind: 'revoke'; id: bigint; json: boolean }
  | { kind: 'set-plan'; id: bigint; plan: Plan; perMinute?: number; perDay?: number; json: boolean }
  | { kind: 'set-scopes'; id: bigint; scopes: Scope[]; json: boolean }
  | {
      kind: 'update';
      id: bigint;
      name?: string;
      plan?: Plan;
      perMinute?: number;
      perDay?: number;
      expiresAt?: Date | null;
      scopes?: Scope[];
      json: boolean;
    }
  | { kind: 'admin-create'; name: string; json: boolean }
  | { kind: 'admin-list'; json: boolean }
  | { kind: 'admin-revoke'; id: bigint; json: boolean }
  | { kind: 'audit-verify'; json: boolean }
  | { kind: 'usage'; id: bigint; query: UsageQuery; json: boolean };

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

const LIMIT_OPTIONS: OptionSpec = { 'per-minute': { type: 'string' }, 'per-day': { type: 'string' } };
const COMMANDS: Record<string, { options: OptionSpec; positionals: string[] }> = {
  create: {
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      'expires-in': { type: 'string' },
      scopes: { type: 'string' },
      ...LIMIT_OPTIONS,
    },
    positionals: [],
  },
  list: { options: {}, positionals: [] },
  roll: { options: { overlap: { type: 'string' } }, positionals: ['ID'] },
  revoke: { options: {}, positionals: ['ID'] },
  'set-plan': { options: LIMIT_OPTIONS, positionals: ['ID', 'PLAN'] },
  'set-scopes': { options: {}, positionals: ['ID', 'SCOPES'] },
  update: {
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      'expires-at': { type: 'string' },
      scopes: { type: 'string' },
      ...LIMIT_OPTIONS,
    },
    positionals: ['ID'],
  },
  'admin create': { options: { name: { type: 'string' } }, positionals: [] },
  'admin list': { options: {}, positionals: [] },
  'admin revoke': { options: {}, positionals: ['ID'] },
  'audit verify': { options: {}, positionals: [] },
  usage: {
    options: { from: { type: 'string' }, to: { type: 'string' }, granularity: { type: 'string' } },
    positionals: ['ID'],
  },
};

/** An expiry: an RFC 3339 date-time with its offset (2027-01-31T00:00:00Z), or never (null). */
function expiresAtArg(raw: string): Date | null {
  if (raw === 'never') return null;
  const at = parseRfc3339DateTime(raw);
  if (at === null)
    throw new UsageError(`expiresAt (--expires-at) must be ${EXPIRES_AT_FORMAT}, or never; got "${raw}"`);
  return at;
}

function limit(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > MAX_CUSTOM_LIMIT) {
    throw new UsageError(`--${flag} must be a whole number from 1 to ${MAX_CUSTOM_LIMIT}, got "${raw}"`);
  }
  return Number(raw);
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Longest duration the tool takes: ten years. */
const MAX_DURATION_MS = 3650 * 86_400_000;

/** A duration such as 90d or 24h, in ms; `allowZero` also takes 0. */
export function duration(flag: string, raw: string, allowZero = false): number {
  const match = /^([0-9]{1,7})([smhd])$/.exec(raw);
  const ms = raw === '0' ? 0 : match ? Number(match[1]) * UNIT_MS[match[2]] : NaN;
  if (!(ms <= MAX_DURATION_MS) || (ms === 0 && !allowZero)) {
    throw new UsageError(
      `--${flag} must be a duration such as 90d, 24h, 30m or 90s${allowZero ? ', or 0' : ''} (at most 3650d), got "${raw}"`,
    );
  }
  return ms;
}

/** How long a rolled key's old secret keeps working unless --overlap says otherwise. */
export const DEFAULT_OVERLAP_MS = 86_400_000;

function keyId(raw: string, what = 'a key (see list)'): bigint {
  if (!/^[1-9][0-9]{0,18}$/.test(raw) || BigInt(raw) > 9223372036854775807n) {
    throw new UsageError(`ID must be the number of ${what}, got "${raw}"`);
  }
  return BigInt(raw);
}

/** The commands that take a command of their own, and what they take. */
const GROUPS: Record<string, string> = { admin: 'create, list or revoke', audit: 'verify' };

/** Parses the tool's arguments; throws UsageError for anything it cannot run. */
export function parseCommand(argv: string[]): Command {
  const [first, ...afterFirst] = argv;
  if (first === undefined) throw new UsageError('a command is required');
  if (first === 'help' || first === '--help' || first === '-h') return { kind: 'help' };
  // `admin` and `audit` take a command of their own: admin create, admin list, admin revoke;
  // audit verify.
  const group = GROUPS[first];
  const [name, rest] =
    group !== undefined
      ? afterFirst[0] === undefined || afterFirst[0].startsWith('-')
        ? (() => {
            throw new UsageError(`${first} needs a command: ${group}`);
          })()
        : [`${first} ${afterFirst[0]}`, afterFirst.slice(1)]
      : [first, afterFirst];
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
    throw new UsageError(
      `${name} takes ${want}, got ${positionals.length === 0 ? 'none' : positionals.map((p) => `"${p}"`).join(' ')}`,
    );
  }
  const json = values.json === true;
  const str = (key: string): string | undefined =>
    (values as Record<string, string | boolean | undefined>)[key] as string | undefined;
  try {
    switch (name) {
      case 'create': {
        const keyName = str('name');
        const plan = str('plan');
        if (keyName === undefined) throw new UsageError('create needs --name');
        if (plan === undefined) throw new UsageError('create needs --plan');
        const limits = checkPlan(plan, limit('per-minute', str('per-minute')), limit('per-day', str('per-day')));
        const expiresIn = str('expires-in');
        const expiresInMs = expiresIn === undefined ? undefined : duration('expires-in', expiresIn);
        const scopes = str('scopes');
        return {
          kind: 'create',
          name: checkName(keyName),
          ...withLimits(limits),
          expiresInMs,
          ...(scopes === undefined ? {} : { scopes: checkScopes(scopes) }),
          json,
        };
      }
      case 'list':
        return { kind: 'list', json };
      case 'roll': {
        const overlap = str('overlap');
        return {
          kind: 'roll',
          id: keyId(positionals[0]),
          overlapMs: overlap === undefined ? DEFAULT_OVERLAP_MS : duration('overlap', overlap, true),
          json,
        };
      }
      case 'revoke':
        return { kind: 'revoke', id: keyId(positionals[0]), json };
      case 'set-scopes':
        return { kind: 'set-scopes', id: keyId(positionals[0]), scopes: checkScopes(positionals[1]), json };
      case 'update': {
        const id = keyId(positionals[0]);
        const keyName = str('name');
        const plan = str('plan');
        const perMinute = limit('per-minute', str('per-minute'));
        const perDay = limit('per-day', str('per-day'));
        const expiresAtRaw = str('expires-at');
        const expiresAt = expiresAtRaw === undefined ? undefined : expiresAtArg(expiresAtRaw);
        const scopesRaw = str('scopes');
        const scopes = scopesRaw === undefined ? undefined : checkScopes(scopesRaw);
        if ([keyName, plan, perMinute, perDay, expiresAt, scopes].every((v) => v === undefined)) {
          throw new UsageError(
            'update needs at least one of --name, --plan, --per-minute, --per-day, --expires-at, --scopes',
          );
        }
        if (plan !== undefined) checkPlanName(plan);
        return {
          kind: 'update',
          id,
          name: keyName === undefined ? undefined : checkName(keyName),
          plan: plan as Plan | undefined,
          perMinute,
          perDay,
          expiresAt,
          scopes,
          json,
        };
      }
      case 'admin create': {
        const tokenName = str('name');
        if (tokenName === undefined) throw new UsageError('admin create needs --name');
        return { kind: 'admin-create', name: checkAdminTokenName(tokenName), json };
      }
      case 'admin list':
        return { kind: 'admin-list', json };
      case 'admin revoke':
        return { kind: 'admin-revoke', id: keyId(positionals[0], 'an admin token (see admin list)'), json };
      case 'audit verify':
        return { kind: 'audit-verify', json };
      case 'usage': {
        const id = keyId(positionals[0]);
        if (str('from') === undefined) throw new UsageError('usage needs --from');
        if (str('to') === undefined) throw new UsageError('usage needs --to');
        const query = parseUsageQuery({ from: str('from'), to: str('to'), granularity: str('granularity') });
        return { kind: 'usage', id, query, json };
      }
      default: {
        const id = keyId(positionals[0]);
        const limits = checkPlan(
          positionals[1],
          limit('per-minute', str('per-minute')),
          limit('per-day', str('per-day')),
        );
        return { kind: 'set-plan', id, ...withLimits(limits), json };
      }
    }
  } catch (err) {
    if (err instanceof ApiKeyInputError) throw new UsageError(err.message);
    if (err instanceof UsageQueryError) throw new UsageError(`--${err.parameter}: ${err.message}`);
    throw err;
  }
}

/** A plan's name alone (its limits are checked against the key's by ApiKeysService.update). */
function checkPlanName(plan: string): void {
  if (!(PLANS as readonly string[]).includes(plan)) {
    throw new UsageError(`plan must be one of ${PLANS.join(', ')}, got "${plan}"`);
  }
}

function withLimits(l: { plan: Plan; perMinute: number | null; perDay: number | null }) {
  return { plan: l.plan, perMinute: l.perMinute ?? undefined, perDay: l.perDay ?? undefined };
}
