import { ApiKeyInputError } from '../auth/api-key-input.js';
import { ApiKeyInfo, keyState } from '../auth/api-keys.service.js';
import { DataDirLockedError } from '../database/data-dir-lock.js';
import { isDatabaseUnavailable } from '../errors/database-errors.js';
import { NoSuchKeyError, Outcome } from './apikey.operations.js';

/** A key as the tool shows it: never the secret or its hash. Ids are small, so JSON numbers. */
function toJson(info: ApiKeyInfo, now: Date) {
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
    expiresAt: info.expiresAt?.toISOString() ?? null,
    previousSecretExpiresAt: info.previousExpiresAt?.toISOString() ?? null,
    scopes: info.scopes,
    state: keyState(info, now),
  };
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
  return text;
}

function describe(info: ApiKeyInfo): string {
  return `${info.id} "${info.name}" (plan ${info.plan}: ${info.perMinute}/minute, ${info.perDay}/day; scopes ${info.scopes.join(',')})`;
}

function table(keys: ApiKeyInfo[], now: Date): string {
  const rows = [
    ['ID', 'NAME', 'PLAN', 'PER_MINUTE', 'PER_DAY', 'SCOPES', 'PREFIX', 'CREATED', 'LAST_USED', 'STATE'],
    ...keys.map((k) => [
      String(k.id),
      k.name,
      k.plan,
      String(k.perMinute),
      String(k.perDay),
      k.scopes.join(','),
      `${k.prefix}…`,
      k.createdAt.toISOString(),
      k.lastUsedAt?.toISOString() ?? '-',
      stateText(k, now),
    ]),
  ];
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

/** What the tool prints on stdout for an outcome: one line of JSON with --json, else text. */
export function render(outcome: Outcome, json: boolean): string {
  if (json) return `${JSON.stringify(asJson(outcome))}\n`;
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
  }
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
      return toJson(outcome.info, now);
  }
}

/** Why the database could not be opened. */
export function explainOpenFailure(err: unknown): string {
  return err instanceof DataDirLockedError ? err.message : `cannot open the database: ${(err as Error).message}`;
}

/** Why an operation failed, in the user's terms. */
export function explainFailure(err: unknown): string {
  if (err instanceof NoSuchKeyError || err instanceof ApiKeyInputError) return err.message;
  if ((err as { code?: unknown })?.code === 'P2021') {
    return 'the api_keys table does not exist: apply the migrations first (npm run db:migrate)';
  }
  if (isDatabaseUnavailable(err)) return `cannot reach the database: ${(err as Error).message}`;
  return `failed: ${(err as Error)?.message ?? String(err)}`;
}
