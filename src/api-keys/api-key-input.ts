import { nameMessage, nameProblem } from '../http/names.js';
import { MAX_CUSTOM_LIMIT, PLANS, type Plan } from './plans.js';
import { isScope, SCOPES, type Scope } from './scopes.js';

/**
 * The checks on what a key is issued with: its name, its plan and an enterprise key's own
 * limits, its scopes. The key tool runs them on its arguments, ApiKeysService on what it stores,
 * whichever door (the key tool, the admin API) asked; the messages name both spellings of a field.
 */

/** A plan, name or limit that a key cannot have (the tool reports it as a usage error). */
export class ApiKeyInputError extends Error {}

export const MAX_NAME_LENGTH = 100;

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
      throw new ApiKeyInputError(
        `the ${plan} plan has fixed limits; perMinute and perDay (--per-minute, --per-day) are for enterprise only`,
      );
    }
    return { plan: plan as Plan, perMinute: null, perDay: null };
  }
  if (perMinute === undefined || perDay === undefined) {
    throw new ApiKeyInputError('the enterprise plan needs both perMinute and perDay (--per-minute, --per-day)');
  }
  for (const [flag, n] of [
    ['perMinute (--per-minute)', perMinute],
    ['perDay (--per-day)', perDay],
  ] as const) {
    if (!Number.isInteger(n) || n < 1 || n > MAX_CUSTOM_LIMIT) {
      throw new ApiKeyInputError(`${flag} must be a whole number from 1 to ${MAX_CUSTOM_LIMIT}, got ${n}`);
    }
  }
  if (perMinute > perDay) {
    throw new ApiKeyInputError(`perMinute (${perMinute}) cannot exceed perDay (${perDay})`);
  }
  return { plan: 'enterprise', perMinute, perDay };
}

/**
 * Checks the name of a key or an admin token by the rules every name follows (src/http/names.ts),
 * at most MAX_NAME_LENGTH code points; returns it trimmed.
 */
export function checkName(name: string): string {
  const trimmed = name.trim();
  // trim() takes U+2028/U+2029 and U+FEFF off the ends too: a name given with one is refused.
  const problem =
    nameProblem(trimmed, MAX_NAME_LENGTH) ??
    (nameProblem(name, Number.POSITIVE_INFINITY) === 'forbidden' ? 'forbidden' : undefined);
  if (problem !== undefined) throw new ApiKeyInputError(nameMessage(problem, 'name', MAX_NAME_LENGTH));
  return trimmed;
}

/**
 * A key's scopes in their canonical order, from a list such as `pets:read,pets:write` (or its
 * items): known scopes, each at most once, at least one.
 */
export function checkScopes(scopes: string | readonly string[]): Scope[] {
  const items = typeof scopes === 'string' ? scopes.split(',').map((s) => s.trim()) : scopes;
  const seen = new Set<Scope>();
  for (const item of items) {
    if (!isScope(item)) {
      throw new ApiKeyInputError(`scopes must be a comma-separated list of ${SCOPES.join(', ')}, got "${item}"`);
    }
    if (seen.has(item)) throw new ApiKeyInputError(`scope ${item} is given more than once`);
    seen.add(item);
  }
  if (seen.size === 0) throw new ApiKeyInputError(`a key needs at least one scope of ${SCOPES.join(', ')}`);
  return SCOPES.filter((s) => seen.has(s));
}

/** How an expiry is written, on both doors (parseRfc3339DateTime), for their messages. */
export const EXPIRES_AT_FORMAT = 'an RFC 3339 date-time with an offset, such as 2027-01-31T00:00:00Z';

/** The longest a key may be set to live from now: ten years (the key tool's longest duration). */
export const MAX_EXPIRY_MS = 3650 * 86_400_000;

/**
 * A change an operator asks of a key, from either door (the key tool, the admin API). Absent
 * fields stay as they are; `expiresAt` null removes the expiry; `scopes` replaces the key's scopes.
 */
export interface KeyChange {
  name?: string;
  plan?: string;
  perMinute?: number;
  perDay?: number;
  expiresAt?: Date | null;
  scopes?: readonly string[];
}

/** What a checked change sets. */
export interface CheckedKeyChange {
  name?: string;
  plan?: Plan;
  perMinute?: number | null;
  perDay?: number | null;
  expiresAt?: Date | null;
  scopes?: Scope[];
}

/**
 * Checks a change against the key as it stands (`current`: its plan and stored limits) at `now`.
 * A plan and its limits are checked together as checkPlan does: an enterprise key given only a
 * new perDay keeps its perMinute; moving to enterprise needs both; another plan takes none.
 */
export function checkKeyChange(
  change: KeyChange,
  current: { plan: Plan; perMinute: number | null; perDay: number | null },
  now: Date,
): CheckedKeyChange {
  const checked: CheckedKeyChange = {};
  if (change.name !== undefined) checked.name = checkName(change.name);
  if (change.plan !== undefined || change.perMinute !== undefined || change.perDay !== undefined) {
    const plan = change.plan ?? current.plan;
    const keeps = plan === 'enterprise' && current.plan === 'enterprise';
    const perMinute = change.perMinute ?? (keeps ? (current.perMinute ?? undefined) : undefined);
    const perDay = change.perDay ?? (keeps ? (current.perDay ?? undefined) : undefined);
    Object.assign(checked, checkPlan(plan, perMinute, perDay));
  }
  if (change.expiresAt !== undefined) checked.expiresAt = checkExpiry(change.expiresAt, now);
  if (change.scopes !== undefined) checked.scopes = checkScopes(change.scopes);
  return checked;
}

/** An expiry an operator sets: null (none), or an instant after now and at most ten years ahead. */
export function checkExpiry(expiresAt: Date | null, now: Date): Date | null {
  if (expiresAt === null) return null;
  const left = expiresAt.getTime() - now.getTime();
  if (!(left > 0)) throw new ApiKeyInputError('expiresAt must be in the future; revoke a key to stop it now');
  if (left > MAX_EXPIRY_MS) throw new ApiKeyInputError('expiresAt must be at most 3650 days from now');
  return expiresAt;
}
