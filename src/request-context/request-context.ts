import type { Span } from '@opentelemetry/api';
import type { Request } from 'express';

/** Who sent a request, once its API key is verified (the auth feature's Principal is one). */
export interface RequestPrincipal {
  /** ApiKey id: stable, safe to log and to scope records by. */
  readonly keyId: string;
  readonly plan: string;
}

/** One rate-limit window of a quota read: its limit, the requests counted in it, its reset (Unix ms). */
export interface RequestQuotaWindow {
  readonly name: string;
  readonly limit: number;
  readonly count: number;
  readonly resetMs: number;
}

/** A key's quota as admission read it without counting (the rate limiter's QuotaRead is one). */
export interface RequestQuota {
  readonly windows: readonly RequestQuotaWindow[];
  /** Set while the subject is banned: when the ban ends (Unix ms). */
  readonly bannedUntilMs?: number;
}

/**
 * What admission decided about a request: who sent it (a valid key's principal, if any) and
 * whom it is counted against. The admission module's Admission is one, with the rest of its
 * decision (windows, headers, refusal).
 */
export interface RequestAdmission {
  readonly principal?: RequestPrincipal;
  readonly subject: { readonly id: string; readonly plan: string; readonly perMinute: number; readonly perDay: number };
  /** On a route that reads the key's quota instead of counting it (GET /v1/rate_limit), the quota read. */
  readonly quota?: RequestQuota;
}

/** Why a request met the database's failure, for database_errors_total (set by the exception filter). */
export type DatabaseErrorKind = 'unavailable' | 'query';

/**
 * What the service learns about one request as it passes through, in one typed place: written
 * by the layer that knows it, read by the others (the access log, metrics, idempotency scoping)
 * without their importing each other. The request id stays `req.id`, where Express middleware
 * and log tooling expect it.
 */
export interface RequestContext {
  /** Set by admission (the global guard, or the unmatched-route layer) before any handler runs. */
  admission?: RequestAdmission;
  /** Set by the exception filter when the request failed on the database. */
  databaseError?: DatabaseErrorKind;
  /** The request's trace span, while tracing is on (set by the request edge). */
  span?: Span;
  /** On the admin API: the name of the admin token the request was made with (set by its guard). */
  adminActor?: string;
  /** On the admin API: that token's id (set by its guard). */
  adminTokenId?: bigint;
  /** `req.ip`, read once (requestIp). */
  ip?: string;
}

const CONTEXT = Symbol('animal-store.request-context');
type WithContext = Request & { [CONTEXT]?: RequestContext };

/** The context of a request (made on first use). */
export function requestContext(req: Request): RequestContext {
  return ((req as WithContext)[CONTEXT] ??= {});
}

/** The context of a request if anything was recorded, without making one (the finish hook). */
export function recordedContext(req: Request): RequestContext | undefined {
  return (req as WithContext)[CONTEXT];
}

/**
 * The client address as Express computes it (`req.ip`: X-Forwarded-For through TRUST_PROXY),
 * computed once per request: the getter parses X-Forwarded-For on every read, and the access log
 * reads it as admission does when the address decides (bench scenario listPetsManyKeys).
 */
export function requestIp(req: Request): string | undefined {
  const context = requestContext(req);
  return (context.ip ??= req.ip);
}
