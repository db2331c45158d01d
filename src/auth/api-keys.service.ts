import { Inject, Injectable, Optional } from '@nestjs/common';
import { apiKeysConfig, type ApiKeysConfig } from '../config/api-keys.config.js';
import { Clock, SystemClock } from '../time/clock.js';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key-format.js';
import { ApiKeyInputError, checkName, checkPlan, checkScopes } from './api-key-input.js';
import type { Plan } from './auth.types.js';
import { limitsFor } from './plans.js';
import { DEFAULT_SCOPES, storedScopes, type Scope } from './scopes.js';
import { ApiKeysRepository, type ApiKeyChange, type InfoRow } from './api-keys.repository.js';

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
}

/** Where a key stands at an instant, as the key tool lists it. */
export type ApiKeyState = 'active' | 'expiring' | 'expired' | 'revoked';

/** A key that expires within this long is listed as `expiring`. */
export const EXPIRING_WITHIN_MS = 7 * 86_400_000;

export function keyState(info: Pick<ApiKeyInfo, 'revokedAt' | 'expiresAt'>, now: Date): ApiKeyState {
  if (info.revokedAt !== null) return 'revoked';
  if (info.expiresAt === null) return 'active';
  const left = info.expiresAt.getTime() - now.getTime();
  if (left <= 0) return 'expired';
  return left <= EXPIRING_WITHIN_MS ? 'expiring' : 'active';
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
  /** What the key may do; undefined: every scope (DEFAULT_SCOPES). */
  scopes?: readonly string[];
}

function toInfo(row: InfoRow): ApiKeyInfo {
  return { ...row, ...limitsFor(row.plan, row.perMinute, row.perDay), scopes: storedScopes(row.scopes) };
}

/**
 * Issuing, listing, revoking and re-planning keys (the key tool and the first-run development
 * key), and the lookup authentication makes; their statements are ApiKeysRepository's.
 */
@Injectable()
export class ApiKeysService {
  private readonly changeListeners: ((hash: string) => void)[] = [];

  constructor(
    private readonly repository: ApiKeysRepository,
    @Inject(apiKeysConfig.token) private readonly config: ApiKeysConfig,
    @Optional() private readonly clock: Clock = new SystemClock(),
  ) {}

  /** A new secret and the hash stored for it. */
  private secret(): { key: string; hash: string } {
    const key = generateApiKey(this.config.apiKeyChecksumSecret);
    return { key, hash: hashApiKey(key, this.config.apiKeyPepper) };
  }

  /** Called with the hash of a key revoked or re-planned by this process (cache invalidation). */
  onKeyChanged(listener: (hash: string) => void): void {
    this.changeListeners.push(listener);
  }

  /** Issues a key. The returned secret exists nowhere else: show it once, never store it. */
  async create(input: NewApiKey): Promise<{ info: ApiKeyInfo; key: string }> {
    const name = checkName(input.name);
    const plan = checkPlan(input.plan, input.perMinute, input.perDay);
    const scopes = checkScopes(input.scopes ?? DEFAULT_SCOPES);
    const now = this.clock.now();
    const expiresAt = input.expiresInMs === undefined ? null : new Date(now.getTime() + input.expiresInMs);
    const { key, hash } = this.secret();
    const row = await this.repository.insert({
      name,
      ...plan,
      prefix: displayPrefix(key),
      hash,
      createdAt: now,
      expiresAt,
      scopes,
    });
    return { info: toInfo(row), key };
  }

  /**
   * Gives a live key a new secret, keeping its record, plan and counters. The secret it replaces
   * keeps working for `overlapMs` (0: it stops at once), so clients can move without downtime;
   * a secret replaced earlier stops now. Null when there is no such key.
   */
  async roll(id: bigint, overlapMs: number): Promise<{ info: ApiKeyInfo; key: string } | null> {
    const existing = await this.repository.findSecrets(id);
    if (!existing) return null;
    const now = this.clock.now();
    if (existing.revokedAt) throw new ApiKeyInputError(`API key ${id} is revoked; issue a new key instead`);
    if (existing.expiresAt && existing.expiresAt <= now)
      throw new ApiKeyInputError(`API key ${id} has expired; issue a new key instead`);
    const { key, hash } = this.secret();
    const previous =
      overlapMs > 0
        ? { previousHash: existing.hash, previousExpiresAt: new Date(now.getTime() + overlapMs) }
        : { previousHash: null, previousExpiresAt: null };
    const row = await this.repository.replaceSecret(id, existing.hash, {
      hash,
      prefix: displayPrefix(key),
      ...previous,
    });
    this.changed(existing.hash);
    if (existing.previousHash) this.changed(existing.previousHash);
    return { info: toInfo(row), key };
  }

  /** Every key, revoked ones included, in order of creation. */
  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.repository.list();
    return rows.map(toInfo);
  }

  async count(): Promise<number> {
    return this.repository.count();
  }

  async get(id: bigint): Promise<ApiKeyInfo | null> {
    const row = await this.repository.findInfo(id);
    return row && toInfo(row);
  }

  /** Revokes a key; null when there is none with that id. Revoking twice changes nothing. */
  async revoke(id: bigint): Promise<{ info: ApiKeyInfo; alreadyRevoked: boolean } | null> {
    const revoked = await this.repository.revoke(id, this.clock.now());
    const row = await this.repository.findInfoWithHashes(id);
    if (!row) return null;
    const { hash, previousHash, ...info } = row;
    this.changed(hash);
    if (previousHash) this.changed(previousHash);
    return { info: toInfo(info), alreadyRevoked: !revoked };
  }

  /** Moves a live key to another plan; null when there is no such key. */
  async setPlan(id: bigint, plan: string, perMinute?: number, perDay?: number): Promise<ApiKeyInfo | null> {
    const limits = checkPlan(plan, perMinute, perDay);
    const existing = await this.repository.findRevokedAt(id);
    if (!existing) return null;
    if (existing.revokedAt) throw new ApiKeyInputError(`API key ${id} is revoked; issue a new key instead`);
    const row = await this.repository.setLimits(id, limits);
    const { hash, previousHash, ...info } = row;
    this.changed(hash);
    if (previousHash) this.changed(previousHash);
    return toInfo(info);
  }

  /**
   * Gives a live key these scopes (replacing what it had); null when there is no such key. Every
   * instance applies the change within API_KEY_CACHE_TTL_MS (its poll of changed keys).
   */
  async setScopes(id: bigint, scopes: readonly string[]): Promise<ApiKeyInfo | null> {
    const checked = checkScopes(scopes);
    const existing = await this.repository.findRevokedAt(id);
    if (!existing) return null;
    if (existing.revokedAt) throw new ApiKeyInputError(`API key ${id} is revoked; issue a new key instead`);
    const row = await this.repository.setScopes(id, checked);
    const { hash, previousHash, ...info } = row;
    this.changed(hash);
    if (previousHash) this.changed(previousHash);
    return toInfo(info);
  }

  /**
   * The key one of whose secrets (current, or replaced by a roll) has this hash, for
   * authentication: it runs for each key an instance has not cached.
   */
  async findByHash(hash: string): Promise<StoredApiKey | null> {
    const row = await this.repository.findByHash(hash);
    if (!row) return null;
    const previous = row.hash !== hash && row.previousHash === hash;
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

  private changed(hash: string): void {
    for (const listener of this.changeListeners) listener(hash);
  }
}
