import { Inject, Injectable, Optional } from '@nestjs/common';
import { apiKeysConfig, type ApiKeysConfig } from '../config/api-keys.config.js';
import { Clock, SystemClock } from '../time/clock.js';
import { displayPrefix, generateApiKey, hashApiKey, hashesEqual } from './api-key-format.js';
import {
  ApiKeyInputError,
  checkExpiry,
  checkKeyChange,
  checkName,
  checkPlan,
  checkScopes,
  type KeyChange,
} from './api-key-input.js';
import { AuditLogRepository } from '../audit/audit-log.repository.js';
import { changedFields, instant, type Actor, type AuditValue } from '../audit/audit.js';
import { limitsFor, type Plan } from './plans.js';
import { DEFAULT_SCOPES, storedScopes, type Scope } from './scopes.js';
import { ApiKeysRepository, type ApiKeyChange, type FoundKeyRow, type InfoRow } from './api-keys.repository.js';
import { KEY_EVENTS, type KeyEvent, type KeyEventData, type KeyEventSink } from './key-events.js';
import type { Db } from '../audit/audit-log.repository.js';

/** A key as listed: never the secret, never its hash. */
export interface ApiKeyInfo {
  id: bigint;
  name: string;
  plan: Plan;
  /** Limits in force (the plan table's, or the key's own for enterprise). */
  perMinute: number;
  perDay: number;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
  /** Until when the secret replaced by the last roll still works (null: none does). */
  previousExpiresAt: Date | null;
  /** What the key may do, in canonical order. */
  scopes: Scope[];
  /** When a leak of the key was first reported (null: none was). */
  leakedAt: Date | null;
}

/** Where a key stands at an instant, as the key tool lists it. */
export const KEY_STATES = ['active', 'expiring', 'expired', 'revoked'] as const;
export type ApiKeyState = (typeof KEY_STATES)[number];

/** A key that expires within this long is listed as `expiring`. */
export const EXPIRING_WITHIN_MS = 7 * 86_400_000;

export function keyState(info: Pick<ApiKeyInfo, 'revokedAt' | 'expiresAt'>, now: Date): ApiKeyState {
  if (info.revokedAt !== null) return 'revoked';
  if (info.expiresAt === null) return 'active';
  const left = info.expiresAt.getTime() - now.getTime();
  if (left <= 0) return 'expired';
  return left <= EXPIRING_WITHIN_MS ? 'expiring' : 'active';
}

/**
 * A key as both doors show it (the admin API's records, the key tool's --json): never the
 * secret or its hash; instants in ISO 8601, the state at `now`.
 */
export function keyRecord(info: ApiKeyInfo, now: Date) {
  return {
    id: info.id,
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
    leakedAt: info.leakedAt?.toISOString() ?? null,
    state: keyState(info, now),
  };
}

/** What authentication needs of a stored key, found by the hash of one of its secrets. */
export interface StoredApiKey {
  id: bigint;
  /** The hash that was looked up: the current secret's, or the previous one's within its overlap. */
  hash: string;
  plan: Plan;
  perMinute: number;
  perDay: number;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
  /** Set when the lookup matched the secret a roll replaced: the end of its overlap. */
  previousExpiresAt: Date | null;
  scopes: Scope[];
}

export interface NewApiKey {
  name: string;
  plan: Plan;
  /** Required for enterprise, refused for the other plans. */
  perMinute?: number;
  perDay?: number;
  /** The key is refused from this long after it is issued on; undefined: never expires. */
  expiresInMs?: number;
  /** Or the instant it is refused from (checkExpiry); not with expiresInMs. */
  expiresAt?: Date | null;
  /** What the key may do; undefined: every scope (DEFAULT_SCOPES). */
  scopes?: readonly string[];
}

function toInfo(row: InfoRow): ApiKeyInfo {
  return { ...row, ...limitsFor(row.plan, row.perMinute, row.perDay), scopes: storedScopes(row.scopes) };
}

/** A locked row without its hashes. */
function infoOf<T extends InfoRow>(row: T & { hash?: string; previousHash?: string | null }): InfoRow {
  const { hash: _hash, previousHash: _previousHash, ...info } = row;
  return info;
}

/** An event's data: the key as the admin API shows it (ids as text), and what the event adds. */
function eventData(info: ApiKeyInfo, now: Date, extra: KeyEventData): KeyEventData {
  const { id, ...record } = keyRecord(info, now);
  return { keyId: id.toString(), ...record, ...extra };
}

/** A report of leaked secrets: who makes the change and where the secrets were found. */
export interface LeakReport {
  actor: Actor;
  /** Where the secrets were seen (a GitHub report's URL), when the report says. */
  url?: string;
  /** true: revoke each live key reported; false: record the leak and leave the key working. */
  revoke: boolean;
}

/**
 * What a report did to the key of one secret: `revoked` or `notified` (the leak recorded now),
 * `already_revoked` (revoked before), `already_reported` (its leak recorded before),
 * `inactive` (expired, or a secret replaced by a roll whose overlap has ended), `not_found`
 * (no key of ours). Only the first two change anything.
 */
export const LEAK_OUTCOMES = [
  'revoked',
  'notified',
  'already_revoked',
  'already_reported',
  'inactive',
  'not_found',
] as const;
export type LeakOutcome = (typeof LEAK_OUTCOMES)[number];

/** The fields of a key the audit log follows: what an operator sets, never a secret or a hash. */
function audited(info: ApiKeyInfo): Record<string, AuditValue> {
  return {
    name: info.name,
    plan: info.plan,
    perMinute: info.perMinute,
    perDay: info.perDay,
    prefix: info.prefix,
    expiresAt: instant(info.expiresAt),
    scopes: info.scopes,
  };
}

/**
 * A revoked or expired key is final: no change and no roll brings it back (an expiry moved or
 * removed would revive its old secret). Revoking it is still allowed.
 */
function refuseIfFinal(id: bigint, key: Pick<ApiKeyInfo, 'revokedAt' | 'expiresAt'>, now: Date): void {
  if (key.revokedAt) throw new ApiKeyInputError(`API key ${id} is revoked; issue a new key instead`);
  if (key.expiresAt && key.expiresAt <= now) {
    throw new ApiKeyInputError(`API key ${id} has expired; issue a new key instead`);
  }
}

/**
 * The operations on keys, one service behind both doors (the key tool and the admin API, and the
 * first-run development key): issue, list, show, change, roll, revoke, each change with its audit
 * entry in its own transaction; and the lookup authentication makes. Their statements are
 * ApiKeysRepository's and AuditLogRepository's.
 */
@Injectable()
export class ApiKeysService {
  private readonly changeListeners: ((hash: string) => void)[] = [];

  constructor(
    private readonly repository: ApiKeysRepository,
    private readonly audit: AuditLogRepository,
    @Inject(apiKeysConfig.token) private readonly config: ApiKeysConfig,
    @Optional() private readonly clock: Clock = new SystemClock(),
    @Optional() @Inject(KEY_EVENTS) private readonly events: KeyEventSink | null = null,
  ) {
    this.events?.onExpiryCheck(() => this.announceExpiring());
  }

  /**
   * Announces `key.expiring` for each live key that now expires within 7 days, then again
   * within 1 day, each once (a key first seen within 1 day gets the 1-day notice only), with the
   * notices' record in the same transaction.
   */
  async announceExpiring(): Promise<void> {
    const now = this.clock.now();
    await this.repository.transaction(async (tx) => {
      const notices = await this.repository.recordExpiryNotices(now, tx);
      const soonest = new Map<bigint, '7d' | '1d'>();
      for (const { keyId, notice } of notices) if (soonest.get(keyId) !== '1d') soonest.set(keyId, notice);
      for (const [keyId, notice] of soonest) {
        const row = await this.repository.findInfo(keyId, tx);
        if (row) await this.announce(tx, 'key.expiring', toInfo(row), { within: notice });
      }
    });
  }

  /** Hands the event of a change to the sink, in the change's transaction. */
  private async announce(tx: Db, type: KeyEvent['type'], info: ApiKeyInfo, extra: KeyEventData = {}): Promise<void> {
    if (!this.events) return;
    await this.events.announce(tx, { type, data: eventData(info, this.clock.now(), extra) });
  }

  /** A new secret and the hash stored for it. */
  private secret(): { key: string; hash: string } {
    const key = generateApiKey(this.config.apiKeyChecksumSecret);
    return { key, hash: hashApiKey(key, this.config.apiKeyPepper) };
  }

  /** Called with the hash of a key revoked or re-planned by this process (cache invalidation). */
  onKeyChanged(listener: (hash: string) => void): void {
    this.changeListeners.push(listener);
  }

  /**
   * Issues a key, recording `key.created` by `actor` in the same transaction. The returned
   * secret exists nowhere else: show it once, never store it.
   */
  async create(input: NewApiKey, actor: Actor): Promise<{ info: ApiKeyInfo; key: string }> {
    const name = checkName(input.name);
    const plan = checkPlan(input.plan, input.perMinute, input.perDay);
    const scopes = checkScopes(input.scopes ?? DEFAULT_SCOPES);
    const now = this.clock.now();
    const expiresAt =
      input.expiresInMs !== undefined
        ? new Date(now.getTime() + input.expiresInMs)
        : checkExpiry(input.expiresAt ?? null, now);
    const { key, hash } = this.secret();
    const info = await this.repository.transaction(async (tx) => {
      const row = toInfo(
        await this.repository.insert(
          { name, ...plan, prefix: displayPrefix(key), hash, createdAt: now, expiresAt, scopes },
          tx,
        ),
      );
      await this.audit.append(tx, {
        actor,
        action: 'key.created',
        keyId: row.id,
        adminTokenId: null,
        changes: changedFields(null, audited(row)),
      });
      await this.announce(tx, 'key.created', row);
      return row;
    });
    return { info, key };
  }

  /**
   * Gives a live key a new secret, keeping its record, plan and counters, and records
   * `key.rolled`. The secret it replaces keeps working for `overlapMs` (0: it stops at once), so
   * clients can move without downtime; a secret replaced earlier stops now. Null when there is
   * no such key.
   */
  async roll(id: bigint, overlapMs: number, actor: Actor): Promise<{ info: ApiKeyInfo; key: string } | null> {
    const { key, hash } = this.secret();
    const now = this.clock.now();
    const done = await this.repository.transaction(async (tx) => {
      const existing = await this.repository.lockInfoWithHashes(id, tx);
      if (!existing) return null;
      refuseIfFinal(id, existing, now);
      const previous =
        overlapMs > 0
          ? { previousHash: existing.hash, previousExpiresAt: new Date(now.getTime() + overlapMs) }
          : { previousHash: null, previousExpiresAt: null };
      const row = toInfo(
        await this.repository.replaceSecret(id, existing.hash, { hash, prefix: displayPrefix(key), ...previous }, tx),
      );
      await this.audit.append(tx, {
        actor,
        action: 'key.rolled',
        keyId: id,
        adminTokenId: null,
        changes: changedFields(
          { prefix: existing.prefix, previousSecretExpiresAt: instant(existing.previousExpiresAt) },
          { prefix: row.prefix, previousSecretExpiresAt: instant(row.previousExpiresAt) },
        ),
      });
      await this.announce(tx, 'key.rolled', row);
      return { row, hashes: [existing.hash, existing.previousHash] };
    });
    if (!done) return null;
    this.changed(done.hashes);
    return { info: done.row, key };
  }

  /** Every key, revoked ones included, in order of creation. */
  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.repository.list();
    return rows.map(toInfo);
  }

  /**
   * Up to `limit` keys after key `after` (from the first when undefined) that pass the filters, in
   * id order, and whether more follow. The state is taken now.
   */
  async page(
    limit: number,
    after?: bigint,
    filter: { search?: string; plan?: Plan; state?: ApiKeyState } = {},
  ): Promise<{ keys: ApiKeyInfo[]; nextAfter: bigint | null }> {
    const rows = await this.repository.page(limit + 1, after, {
      ...filter,
      now: this.clock.now(),
      expiringWithinMs: EXPIRING_WITHIN_MS,
    });
    const keys = rows.slice(0, limit).map(toInfo);
    return { keys, nextAfter: rows.length > limit ? keys[keys.length - 1].id : null };
  }

  async count(): Promise<number> {
    return this.repository.count();
  }

  /** How many keys are in each state now (the console's overview). */
  async countByState(): Promise<Record<ApiKeyState, number>> {
    return this.repository.countByState(this.clock.now(), EXPIRING_WITHIN_MS);
  }

  async get(id: bigint): Promise<ApiKeyInfo | null> {
    const row = await this.repository.findInfo(id);
    return row && toInfo(row);
  }

  /**
   * Revokes a key and records `key.revoked`; null when there is none with that id. Revoking
   * twice changes nothing and records nothing.
   */
  async revoke(id: bigint, actor: Actor): Promise<{ info: ApiKeyInfo; alreadyRevoked: boolean } | null> {
    const now = this.clock.now();
    const done = await this.repository.transaction(async (tx) => {
      const existing = await this.repository.lockInfoWithHashes(id, tx);
      if (!existing) return null;
      if (existing.revokedAt) return { row: existing, alreadyRevoked: true };
      await this.repository.revoke(id, now, tx);
      await this.audit.append(tx, {
        actor,
        action: 'key.revoked',
        keyId: id,
        adminTokenId: null,
        changes: { revokedAt: { before: null, after: instant(now) } },
      });
      await this.announce(tx, 'key.revoked', toInfo({ ...infoOf(existing), revokedAt: now }), { reason: 'requested' });
      return { row: { ...existing, revokedAt: now }, alreadyRevoked: false };
    });
    if (!done) return null;
    const { hash, previousHash, ...info } = done.row;
    this.changed([hash, previousHash]);
    return { info: toInfo(info), alreadyRevoked: done.alreadyRevoked };
  }

  /**
   * Records a report of leaked secrets, given by their hashes: one statement finds the keys they
   * belong to, then each live key is revoked (or only marked, `report.revoke` false) with
   * `leakedAt` and one audit entry (`key.revoked` or `key.leaked`, reason `leaked`, the report's
   * url) in its own transaction. A key reported again changes nothing and records nothing.
   * The outcome of each hash asked for.
   */
  async recordLeaks(hashes: readonly string[], report: LeakReport): Promise<Map<string, LeakOutcome>> {
    const unique = [...new Set(hashes)];
    const outcomes = new Map<string, LeakOutcome>(unique.map((hash) => [hash, 'not_found']));
    const rows = await this.repository.findSecretsByHashes(unique);
    for (const row of rows) {
      const reported = [row.hash, row.previousHash].filter((h): h is string => h !== null && outcomes.has(h));
      const outcome = await this.recordLeak(row.id, reported, report);
      for (const hash of reported) outcomes.set(hash, outcome.get(hash) ?? 'not_found');
    }
    return outcomes;
  }

  /**
   * The one place a leak of a key is recorded: the key (whose secrets `hashes` were reported)
   * locked, its state checked, the change and its audit entry in one transaction.
   */
  private async recordLeak(id: bigint, hashes: string[], report: LeakReport): Promise<Map<string, LeakOutcome>> {
    const now = this.clock.now();
    const done = await this.repository.transaction(async (tx) => {
      const existing = await this.repository.lockInfoWithHashes(id, tx);
      if (!existing) return null;
      const outcomeOf = (hash: string): LeakOutcome => {
        if (existing.revokedAt) return 'already_revoked';
        if (existing.expiresAt && existing.expiresAt <= now) return 'inactive';
        if (hash !== existing.hash && !(existing.previousExpiresAt && existing.previousExpiresAt > now)) {
          return 'inactive';
        }
        if (existing.leakedAt) return 'already_reported';
        return report.revoke ? 'revoked' : 'notified';
      };
      const outcomes = new Map(hashes.map((hash) => [hash, outcomeOf(hash)]));
      const acting = [...outcomes.values()].find((o) => o === 'revoked' || o === 'notified');
      if (acting === undefined) return { outcomes, row: existing, changed: false };
      await this.repository.recordLeak(id, now, report.revoke, tx);
      const at = instant(now);
      await this.audit.append(tx, {
        actor: report.actor,
        action: report.revoke ? 'key.revoked' : 'key.leaked',
        keyId: id,
        adminTokenId: null,
        changes: {
          ...(report.revoke ? { revokedAt: { before: null, after: at } } : {}),
          leakedAt: { before: null, after: at },
          reason: { before: null, after: 'leaked' },
          ...(report.url === undefined ? {} : { url: { before: null, after: report.url } }),
        },
      });
      const leaked = toInfo({
        ...infoOf(existing),
        leakedAt: now,
        revokedAt: report.revoke ? now : existing.revokedAt,
      });
      await this.announce(tx, report.revoke ? 'key.revoked' : 'key.leaked', leaked, {
        reason: 'leaked',
        ...(report.url === undefined ? {} : { url: report.url }),
      });
      // Every secret of the key now reads as its key does: one leak recorded for the key.
      for (const hash of hashes) if (outcomes.get(hash) !== 'inactive') outcomes.set(hash, acting);
      return { outcomes, row: existing, changed: report.revoke };
    });
    if (!done) return new Map();
    if (done.changed) this.changed([done.row.hash, done.row.previousHash]);
    return done.outcomes;
  }

  /**
   * Changes a live key's name, plan and limits, expiry or scopes (checkKeyChange; a revoked or
   * expired key takes none, refuseIfFinal), and records
   * `key.updated` with the fields that changed; a change that changes nothing records nothing.
   * Every instance applies it within API_KEY_CACHE_TTL_MS. Null when there is no such key.
   */
  async update(id: bigint, change: KeyChange, actor: Actor): Promise<ApiKeyInfo | null> {
    const now = this.clock.now();
    const done = await this.repository.transaction(async (tx) => {
      const existing = await this.repository.lockInfoWithHashes(id, tx);
      if (!existing) return null;
      refuseIfFinal(id, existing, now);
      const checked = checkKeyChange(change, existing, now);
      const before = toInfo(existing);
      const changes = changedFields(audited(before), audited({ ...before, ...toInfo({ ...existing, ...checked }) }));
      if (Object.keys(changes).length === 0) return { row: existing, changed: false };
      const row = await this.repository.update(id, checked, tx);
      await this.audit.append(tx, { actor, action: 'key.updated', keyId: id, adminTokenId: null, changes });
      await this.announce(tx, 'key.updated', toInfo(infoOf(row)), { changes });
      return { row, changed: true };
    });
    if (!done) return null;
    const { hash, previousHash, ...info } = done.row;
    if (done.changed) this.changed([hash, previousHash]);
    return toInfo(info);
  }

  /** Gives a live key these scopes, replacing what it had (update with the scopes only). */
  async setScopes(id: bigint, scopes: readonly string[], actor: Actor): Promise<ApiKeyInfo | null> {
    return this.update(id, { scopes }, actor);
  }

  /** Moves a live key to another plan (update with the plan and its limits only). */
  async setPlan(
    id: bigint,
    plan: string,
    perMinute: number | undefined,
    perDay: number | undefined,
    actor: Actor,
  ): Promise<ApiKeyInfo | null> {
    // Limits given or not, a plan move states the whole plan: checkPlan's rules as at issue.
    const limits = checkPlan(plan, perMinute, perDay);
    return this.update(
      id,
      { plan: limits.plan, perMinute: limits.perMinute ?? undefined, perDay: limits.perDay ?? undefined },
      actor,
    );
  }

  /**
   * The key one of whose secrets (current, or replaced by a roll) has this hash, for
   * authentication: it runs for each key an instance has not cached.
   */
  async findByHash(hash: string): Promise<StoredApiKey | null> {
    const row = await this.repository.findByHash(hash);
    // The row matches one of its two hashes (compared in constant time, once per lookup: the
    // cache then serves the key by this hash), or it is no match.
    const current = row !== undefined && hashesEqual(row.hash, hash);
    const previous = !current && row?.previousHash != null && hashesEqual(row.previousHash, hash);
    if (!row || !(current || previous)) return null;
    return storedKey(row, previous);
  }

  /**
   * The unrevoked keys used in the last `withinMs`, the most recently used first, at most
   * `limit` rows: each under its current secret's hash, and under the previous one's too while
   * a roll's overlap lasts. What findByHash would return for each of those hashes now.
   */
  async recentlyUsed(withinMs: number, limit: number): Promise<StoredApiKey[]> {
    const now = this.clock.now();
    const rows = await this.repository.usedSince(new Date(now.getTime() - withinMs), limit);
    return rows.flatMap((row) =>
      row.previousHash !== null && row.previousExpiresAt !== null && row.previousExpiresAt > now
        ? [storedKey(row, false), storedKey(row, true)]
        : [storedKey(row, false)],
    );
  }

  /** Records that a key was used (AuthService does so at most once a minute per key). */
  async touch(id: bigint): Promise<void> {
    await this.repository.touch(id, this.clock.now());
  }

  /**
   * The keys changed (rolled, re-planned, re-scoped, revoked, given another expiry) after `since`, by any
   * process, and the database's clock at the time of the query. `since` null: no keys,
   * only the clock.
   */
  async changesSince(since: Date | null): Promise<{ now: Date; changes: ApiKeyChange[] }> {
    return this.repository.changesSince(since);
  }

  private changed(hashes: (string | null)[]): void {
    for (const hash of hashes) if (hash !== null) for (const listener of this.changeListeners) listener(hash);
  }
}

/** What authentication needs of a key's row, as found by its current secret's hash or its previous one's. */
function storedKey(row: FoundKeyRow, previous: boolean): StoredApiKey {
  return {
    id: BigInt(row.id),
    hash: previous ? (row.previousHash as string) : row.hash,
    plan: row.plan,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
    expiresAt: row.expiresAt,
    previousExpiresAt: previous ? row.previousExpiresAt : null,
    scopes: storedScopes(row.scopes),
    ...limitsFor(row.plan, row.perMinute, row.perDay),
  };
}
