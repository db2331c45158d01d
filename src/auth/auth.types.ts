import type { ApiError } from '../errors/api-error.js';
import type { Plan } from '../api-keys/plans.js';
import type { Scope } from '../api-keys/scopes.js';

/** The authenticated caller, as the rate limiter and handlers see it. */
export interface Principal {
  /** ApiKey id (stable, safe to log and to key counters on). */
  keyId: string;
  plan: Plan;
  /** Limits in force for this key (plan table, or the key's own for enterprise). */
  perMinute: number;
  perDay: number;
  /** What the key may do (carried from the key's lookup, so checking it costs no I/O). */
  scopes: readonly Scope[];
}

/** Outcome of checking a request's credentials; computed once per request, by admission. */
export type AuthResult = { ok: true; principal: Principal } | { ok: false; error: ApiError };

/** Why a bearer key was refused (api_key_refusals_total). */
export const API_KEY_REFUSAL_REASONS = [
  'malformed',
  'unknown',
  'expired',
  'address_budget',
  'instance_budget',
] as const;
export type ApiKeyRefusalReason = (typeof API_KEY_REFUSAL_REASONS)[number];

/** Why a well-formed bearer admin token was refused (admin_token_refusals_total). */
export const ADMIN_TOKEN_REFUSAL_REASONS = ['unknown', 'address_budget', 'instance_budget'] as const;
export type AdminTokenRefusalReason = (typeof ADMIN_TOKEN_REFUSAL_REASONS)[number];

/**
 * What key verification reports as it goes, for metrics (the metrics module provides it; auth
 * does not depend on metrics). Absent in tools that verify no key.
 */
export abstract class AuthObserver {
  /** One lookup query was sent to the database. */
  abstract lookup(): void;
  abstract refused(reason: ApiKeyRefusalReason): void;
  /** One admin token lookup query was sent to the database. */
  abstract adminTokenLookup(): void;
  abstract adminTokenRefused(reason: AdminTokenRefusalReason): void;
}
