import { ApiKeyInputError } from '../api-keys/api-key-input.js';
import type { AdminTokenInfo } from '../admin-tokens/admin-tokens.service.js';
import { ApiKeyInfo, keyRecord, keyState } from '../api-keys/api-keys.service.js';
import { DataDirLockedError } from '../database/data-dir-lock.js';
import { isDatabaseUnavailable } from '../errors/database-errors.js';
import { escapeUnsafeText } from '../http/names.js';
import type { ChainVerdict } from '../audit/audit-chain.js';
import { DatabaseUnreachableError, NoSuchKeyError, Outcome } from './apikey.operations.js';

/** A key as the tool shows it (keyRecord). Ids are small, so JSON numbers. */
function toJson(info: ApiKeyInfo, now: Date) {
  return { ...keyRecord(info, now), id: Number(info.id) };
}

/** The STATE column: the state and the instant it refers to, and a rolled secret still in its overlap. */
function stateText(k: ApiKeyInfo, now: Date): string {
  const state = keyState(k, now);
  const parts: string[] = [state];
  if (state === 'revoked') parts.push(k.revokedAt?.toISOString() ?? '');
  else if (state === 'expired') parts.push(k.expiresAt?.toISOString() ?? '');
  else if (k.expiresAt) parts.push(`until ${k.expiresAt.toISOString()}`);
  let text = parts.join(' ');
  if (state !== 'revoked' && k.previousExpiresAt && k.previousExpiresAt > now)
    text += `; old secret until ${k.previousExpiresAt.toISOString()}`;
  if (k.leakedAt) text += `; leaked ${k.leakedAt.toISOString()}`;
  return text;
}

function describe(info: ApiKeyInfo): string {
  return `${info.id} "${escapeUnsafeText(info.name)}" (plan ${info.plan}: ${info.perMinute}/minute, ${info.perDay}/day; scopes ${info.scopes.join(',')})`;
}

function table(keys: ApiKeyInfo[], now: Date): string {
  return columns([
    ['ID', 'NAME', 'PLAN', 'PER_MINUTE', 'PER_DAY', 'SCOPES', 'PREFIX', 'CREATED', 'LAST_USED', 'STATE'],
    ...keys.map((k) => [
      String(k.id),
      escapeUnsafeText(k.name),
      k.plan,
      String(k.perMinute),
      String(k.perDay),
      k.scopes.join(','),
      `${k.prefix}…`,
      k.createdAt.toISOString(),
      k.lastUsedAt?.toISOString() ?? '-',
      stateText(k, now),
    ]),
  ]);
}

/** Rows as aligned columns, the first row the header. */
function columns(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...r[i]].length)));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => c + ' '.repeat(widths[i] - [...c].length))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/**
 * What the tool prints on stdout for an outcome: one line of JSON with --json, else text. Names
 * come from the database, where one stored before the name rules may hold control or
 * bidirectional characters: both forms write those as escapes (escapeUnsafeText), never raw.
 */
export function render(outcome: Outcome, json: boolean): string {
  if (json) return `${escapeUnsafeText(JSON.stringify(asJson(outcome)))}\n`;
  switch (outcome.kind) {
    case 'create':
      return `Issued API key ${describe(outcome.info)}${expiry(outcome.info)}.\nThe key is shown only now; store it safely:\n\n${outcome.key}\n\n`;
    case 'roll': {
      const until = outcome.info.previousExpiresAt;
      const old = until
        ? `The old secret keeps working until ${until.toISOString()}.`
        : 'The old secret no longer works.';
      return `Rolled API key ${describe(outcome.info)}. ${old}\nThe new secret is shown only now; store it safely:\n\n${outcome.key}\n\n`;
    }
    case 'list':
      return outcome.keys.length === 0 ? 'No API keys.\n' : table(outcome.keys, outcome.now);
    case 'revoke':
      return outcome.alreadyRevoked
        ? `API key ${describe(outcome.info)} was already revoked (${outcome.info.revokedAt?.toISOString()}).\n`
        : `Revoked API key ${describe(outcome.info)}; every instance refuses it within seconds.\n`;
    case 'set-plan':
    case 'set-scopes':
      return `API key ${describe(outcome.info)} updated.\n`;
    case 'update':
      return `API key ${describe(outcome.info)}${expiry(outcome.info)} updated.\n`;
    case 'admin-create':
      return `Issued admin token ${outcome.info.id} "${escapeUnsafeText(outcome.info.name)}".\nThe token is shown only now; store it safely:\n\n${outcome.token}\n\n`;
    case 'admin-list':
      return outcome.tokens.length === 0 ? 'No admin tokens.\n' : tokenTable(outcome.tokens);
    case 'admin-revoke':
      return outcome.alreadyRevoked
        ? `Admin token ${outcome.info.id} "${escapeUnsafeText(outcome.info.name)}" was already revoked (${outcome.info.revokedAt?.toISOString()}).\n`
        : `Revoked admin token ${outcome.info.id} "${escapeUnsafeText(outcome.info.name)}"; the admin API refuses it from now on.\n`;
    case 'audit-verify':
      return verifyText(outcome.verdict);
    case 'usage':
      return usageText(outcome);
  }
}

function verifyText(verdict: ChainVerdict): string {
  if (!verdict.ok) return `The audit log does not verify: ${verdict.message}.\n`;
  if (verdict.head === null) return 'The audit log is empty.\n';
  return `The audit log's hash chain holds over its ${verdict.entries} entries.\nLast entry: ${verdict.head.id}, hash ${verdict.head.hash}\n`;
}

/** An admin token as the tool shows it: never the token or its hash. */
function tokenJson(info: AdminTokenInfo) {
  return {
    id: Number(info.id),
    name: info.name,
    prefix: info.prefix,
    createdAt: info.createdAt.toISOString(),
    lastUsedAt: info.lastUsedAt?.toISOString() ?? null,
    revokedAt: info.revokedAt?.toISOString() ?? null,
  };
}

function tokenTable(tokens: AdminTokenInfo[]): string {
  return columns([
    ['ID', 'NAME', 'PREFIX', 'CREATED', 'LAST_USED', 'STATE'],
    ...tokens.map((t) => [
      String(t.id),
      escapeUnsafeText(t.name),
      `${t.prefix}…`,
      t.createdAt.toISOString(),
      t.lastUsedAt?.toISOString() ?? '-',
      t.revokedAt ? `revoked ${t.revokedAt.toISOString()}` : 'active',
    ]),
  ]);
}

/** A key's usage: one row per period with requests, then the totals of the range. */
function usageText({ id, query, periods }: Extract<Outcome, { kind: 'usage' }>): string {
  const range = `${query.from.toISOString()} to ${query.to.toISOString()}`;
  if (periods.length === 0) return `No requests counted against API key ${id} from ${range}.\n`;
  const rows = [
    [query.granularity === 'hour' ? 'HOUR' : 'DAY', 'REQUESTS', 'LIMITED'],
    ...periods.map((p) => [p.period, String(p.requests), String(p.limited)]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
  const requests = periods.reduce((n, p) => n + p.requests, 0);
  const limited = periods.reduce((n, p) => n + p.limited, 0);
  return `${lines.join('\n')}\nAPI key ${id} from ${range}: ${requests} requests, ${limited} of them answered 429.\n`;
}

function expiry(info: ApiKeyInfo): string {
  return info.expiresAt ? `, expiring ${info.expiresAt.toISOString()}` : '';
}

function asJson(outcome: Outcome): unknown {
  const now = new Date();
  switch (outcome.kind) {
    case 'create':
    case 'roll':
      return { ...toJson(outcome.info, now), key: outcome.key };
    case 'list':
      return outcome.keys.map((k) => toJson(k, outcome.now));
    case 'revoke':
      return { ...toJson(outcome.info, now), alreadyRevoked: outcome.alreadyRevoked };
    case 'set-plan':
    case 'set-scopes':
    case 'update':
      return toJson(outcome.info, now);
    case 'admin-create':
      return { ...tokenJson(outcome.info), token: outcome.token };
    case 'admin-list':
      return outcome.tokens.map(tokenJson);
    case 'admin-revoke':
      return { ...tokenJson(outcome.info), alreadyRevoked: outcome.alreadyRevoked };
    case 'audit-verify':
      return outcome.verdict.ok
        ? {
            ok: true,
            entries: outcome.verdict.entries,
            head: outcome.verdict.head && { id: outcome.verdict.head.id.toString(), hash: outcome.verdict.head.hash },
          }
        : { ...outcome.verdict, entryId: outcome.verdict.entryId.toString() };
    case 'usage':
      return outcome.periods;
  }
}

const CHECK_DATABASE =
  'check DATABASE_URL (host, port, user, database) and that PostgreSQL runs there and accepts connections';

/** A driver's or server's error code (a socket error, or a SQLSTATE), looked for down the causes. */
function errorCode(err: unknown): string | undefined {
  for (let cur = err, depth = 0; cur && typeof cur === 'object' && depth < 5; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** An error's own words without a library's framing: Prisma puts its message last, after the call it was in. */
function plainMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^Invalid `.*` invocation/.test(line));
  return (lines.at(-1) ?? text).slice(0, 300);
}

/** Why a connection to PostgreSQL failed, in the operator's terms. */
function connectFailure(err: unknown): string {
  const code = errorCode(err);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name does not resolve (${code})`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      return `no answer (${code})`;
    case '28P01':
    case '28000':
      return `authentication failed (${code})`;
    case '3D000':
      return 'the database does not exist (3D000)';
    default:
      return /timeout/i.test(plainMessage(err))
        ? 'no answer within DB_CONNECT_TIMEOUT_MS'
        : `${plainMessage(err)}${code ? ` (${code})` : ''}`;
  }
}

/** Why the database could not be opened: one line, naming where and what to check. */
export function explainOpenFailure(err: unknown): string {
  if (err instanceof DataDirLockedError) return err.message;
  if (err instanceof DatabaseUnreachableError) return `${err.message}: ${connectFailure(err.cause)}; ${CHECK_DATABASE}`;
  return `cannot open the database: ${plainMessage(err)}`;
}

/** Why an operation failed, in the user's terms (one line, no library internals). */
export function explainFailure(err: unknown): string {
  if (err instanceof NoSuchKeyError || err instanceof ApiKeyInputError) return err.message;
  if ((err as { code?: unknown })?.code === 'P2021') {
    return 'a table of the key tool does not exist: apply the migrations first (npm run db:migrate)';
  }
  if (isDatabaseUnavailable(err)) return `lost the database: ${plainMessage(err)}; ${CHECK_DATABASE}`;
  return `failed: ${plainMessage(err)}`;
}
