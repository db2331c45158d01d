import { Inject, Injectable } from '@nestjs/common';
import { apiKeysConfig, type ApiKeysConfig } from '../config/api-keys.config.js';
import { PrismaService } from '../database/prisma.service.js';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key-format.js';
import { PLANS, Plan } from './auth.types.js';
import { limitsFor, MAX_CUSTOM_LIMIT } from './plans.js';

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
}

/** What authentication needs of a stored key. */
export interface StoredApiKey {
  id: bigint;
  hash: string;
  plan: Plan;
  perMinute: number;
  perDay: number;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface NewApiKey {
  name: string;
  plan: Plan;
  /** Required for enterprise, refused for the other plans. */
  perMinute?: number;
  perDay?: number;
}

/** A plan, name or limit that a key cannot have (the tool reports it as a usage error). */
export class ApiKeyInputError extends Error {}

export const MAX_NAME_LENGTH = 100;

const INFO_FIELDS = {
  id: true,
  name: true,
  plan: true,
  perMinute: true,
  perDay: true,
  prefix: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

type InfoRow = {
  id: bigint;
  name: string;
  plan: Plan;
  perMinute: number | null;
  perDay: number | null;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

function toInfo(row: InfoRow): ApiKeyInfo {
  return { ...row, ...limitsFor(row.plan, row.perMinute, row.perDay) };
}

/** Checks a plan and its limits; returns the custom limits to store (null unless enterprise). */
export function checkPlan(
  plan: string,
  perMinute?: number,
  perDay?: number,
): { plan: Plan; perMinute: number | null; perDay: number | null } {
  if (!(PLANS as readonly string[]).includes(plan)) {
    throw new ApiKeyInputError(`plan must be one of ${PLANS.join(', ')}, got "${plan}"`);
  }
  if (plan !== 'enterprise') {
    if (perMinute !== undefined || perDay !== undefined) {
      throw new ApiKeyInputError(`the ${plan} plan has fixed limits; --per-minute and --per-day are for enterprise only`);
    }
    return { plan: plan as Plan, perMinute: null, perDay: null };
  }
  if (perMinute === undefined || perDay === undefined) {
    throw new ApiKeyInputError('the enterprise plan needs both --per-minute and --per-day');
  }
  for (const [flag, n] of [
    ['--per-minute', perMinute],
    ['--per-day', perDay],
  ] as const) {
    if (!Number.isInteger(n) || n < 1 || n > MAX_CUSTOM_LIMIT) {
      throw new ApiKeyInputError(`${flag} must be a whole number from 1 to ${MAX_CUSTOM_LIMIT}, got ${n}`);
    }
  }
  if (perMinute > perDay) {
    throw new ApiKeyInputError(`--per-minute (${perMinute}) cannot exceed --per-day (${perDay})`);
  }
  return { plan: 'enterprise', perMinute, perDay };
}

export function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || [...trimmed].length > MAX_NAME_LENGTH) {
    throw new ApiKeyInputError(`name must be 1 to ${MAX_NAME_LENGTH} characters, not only spaces`);
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw new ApiKeyInputError('name must not contain control characters');
  return trimmed;
}

/**
 * Issuing, listing, revoking and re-planning keys (the key tool and the first-run development
 * key), and the lookup authentication makes. The only code that touches the api_keys table.
 */
@Injectable()
export class ApiKeysService {
  private readonly changeListeners: ((hash: string) => void)[] = [];

  constructor(
    private readonly prisma: PrismaService,
    @Inject(apiKeysConfig.token) private readonly config: ApiKeysConfig,
  ) {}

  /** Called with the hash of a key revoked or re-planned by this process (cache invalidation). */
  onKeyChanged(listener: (hash: string) => void): void {
    this.changeListeners.push(listener);
  }

  /** Issues a key. The returned secret exists nowhere else: show it once, never store it. */
  async create(input: NewApiKey): Promise<{ info: ApiKeyInfo; key: string }> {
    const name = checkName(input.name);
    const plan = checkPlan(input.plan, input.perMinute, input.perDay);
    const key = generateApiKey();
    const row = await this.prisma.apiKey.create({
      data: { name, ...plan, prefix: displayPrefix(key), hash: hashApiKey(key, this.config.apiKeyPepper) },
      select: INFO_FIELDS,
    });
    return { info: toInfo(row), key };
  }

  /** Every key, revoked ones included, in order of creation. */
  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.prisma.apiKey.findMany({ select: INFO_FIELDS, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return rows.map(toInfo);
  }

  async count(): Promise<number> {
    return this.prisma.apiKey.count();
  }

  async get(id: bigint): Promise<ApiKeyInfo | null> {
    const row = await this.prisma.apiKey.findUnique({ where: { id }, select: INFO_FIELDS });
    return row && toInfo(row);
  }

  /** Revokes a key; null when there is none with that id. Revoking twice changes nothing. */
  async revoke(id: bigint): Promise<{ info: ApiKeyInfo; alreadyRevoked: boolean } | null> {
    const { count } = await this.prisma.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
    const row = await this.prisma.apiKey.findUnique({ where: { id }, select: { ...INFO_FIELDS, hash: true } });
    if (!row) return null;
    const { hash, ...info } = row;
    this.changed(hash);
    return { info: toInfo(info), alreadyRevoked: count === 0 };
  }

  /** Moves a live key to another plan; null when there is no such key. */
  async setPlan(id: bigint, plan: string, perMinute?: number, perDay?: number): Promise<ApiKeyInfo | null> {
    const limits = checkPlan(plan, perMinute, perDay);
    const existing = await this.prisma.apiKey.findUnique({ where: { id }, select: { revokedAt: true } });
    if (!existing) return null;
    if (existing.revokedAt) throw new ApiKeyInputError(`API key ${id} is revoked; issue a new key instead`);
    const row = await this.prisma.apiKey.update({ where: { id }, data: limits, select: { ...INFO_FIELDS, hash: true } });
    const { hash, ...info } = row;
    this.changed(hash);
    return toInfo(info);
  }

  /** The key whose hash this is, for authentication. */
  async findByHash(hash: string): Promise<StoredApiKey | null> {
    const row = await this.prisma.apiKey.findUnique({
      where: { hash },
      select: { id: true, hash: true, plan: true, perMinute: true, perDay: true, lastUsedAt: true, revokedAt: true },
    });
    if (!row) return null;
    return { ...row, ...limitsFor(row.plan, row.perMinute, row.perDay) };
  }

  /** Records that a key was used (callers throttle this; see AuthService). */
  async touch(id: bigint): Promise<void> {
    await this.prisma.apiKey.updateMany({ where: { id }, data: { lastUsedAt: new Date() } });
  }

  private changed(hash: string): void {
    for (const listener of this.changeListeners) listener(hash);
  }
}
