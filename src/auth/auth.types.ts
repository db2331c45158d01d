import type { ApiError } from '../errors/api-error.js';

/** Plans of API keys (interface, "Request rates by plan"). */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** The authenticated caller, as the rate limiter and handlers see it. */
export interface Principal {
  /** ApiKey id (stable, safe to log and to key counters on). */
  keyId: string;
  plan: Plan;
  /** Limits in force for this key (plan table, or the key's own for enterprise). */
  perMinute: number;
  perDay: number;
}

/** Outcome of checking a request's credentials; computed once per request and memoised. */
export type AuthResult = { ok: true; principal: Principal } | { ok: false; error: ApiError };
