/** Plans of API keys (docs/api.md, "API keys and plans"). */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface Limits {
  perMinute: number;
  perDay: number;
}

/** Request rates by plan (docs/api.md, "API keys and plans"); enterprise keys carry their own. */
export const PLAN_LIMITS: Readonly<Record<Exclude<Plan, 'enterprise'>, Readonly<Limits>>> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

/**
 * Largest custom limit an enterprise key may carry, per minute and per day, on both doors: the
 * number docs/api-keys.md and docs/admin-api.md state (plans.spec.ts reads it there). Below the
 * PostgreSQL INTEGER columns' 2,147,483,647.
 */
export const MAX_CUSTOM_LIMIT = 1_000_000_000;

/**
 * The limits in force for a key: the plan table's, or the key's own for enterprise.
 * A database row that breaks the CHECK constraint's rule is a bug, so it throws.
 */
export function limitsFor(plan: Plan, perMinute: number | null, perDay: number | null): Limits {
  if (plan === 'enterprise') {
    if (perMinute === null || perDay === null) throw new Error('an enterprise key must carry its own limits');
    return { perMinute, perDay };
  }
  return PLAN_LIMITS[plan];
}
