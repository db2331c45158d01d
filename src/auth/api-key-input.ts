import { PLANS, Plan } from './auth.types.js';
import { MAX_CUSTOM_LIMIT } from './plans.js';
import { isScope, SCOPES, type Scope } from './scopes.js';

/**
 * The checks on what a key is issued with: its name, its plan and an enterprise key's own
 * limits, its scopes. The key tool runs them on its arguments, ApiKeysService on what it stores.
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
        `the ${plan} plan has fixed limits; --per-minute and --per-day are for enterprise only`,
      );
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

/** Checks a key's name; returns it trimmed. */
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
