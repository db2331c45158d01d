import type { components } from './generated/schema.js';

/** The service's error codes, from the generated types (the Error schema's enum). */
export type ErrorCode = components['schemas']['Error']['code'];
export type ErrorDetail = components['schemas']['ErrorDetail'];

/** What the rate-limit headers of a response said (every /v1 response carries them). */
export interface RateLimitState {
  /** Requests allowed in the window closest to exhaustion (X-RateLimit-Limit). */
  limit: number;
  /** Requests left in it (X-RateLimit-Remaining); 0 while refused or banned. */
  remaining: number;
  /** When it resets, or the ban ends (X-RateLimit-Reset). */
  resetAt: Date;
  /** Its name, `minute` or `day` (from the IETF RateLimit field), when the response had it. */
  window?: string;
  /** Seconds the response asked to wait (Retry-After), on a 429 or 503. */
  retryAfterSeconds?: number;
}

/**
 * An error answer of the service: its Error body (`code`, `message`, `status`, `details`),
 * the request id to quote to support (the body's `requestId`, which is the X-Request-Id) and
 * the rate-limit state of the answer. An answer that is not the service's Error body (a
 * proxy's 502 page) gets the code `unexpected_response`.
 */
export class AnimalStoreError extends Error {
  override readonly name: string = 'AnimalStoreError';
  readonly code: ErrorCode | 'unexpected_response';
  readonly status: number;
  readonly details: ErrorDetail[];
  readonly requestId: string | undefined;
  readonly rateLimit: RateLimitState | undefined;

  constructor(init: {
    code: ErrorCode | 'unexpected_response';
    status: number;
    message: string;
    details?: ErrorDetail[];
    requestId?: string;
    rateLimit?: RateLimitState;
  }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.details = init.details ?? [];
    this.requestId = init.requestId;
    this.rateLimit = init.rateLimit;
  }
}

/**
 * A 403 `insufficient_scope`: the API key lacks the scope the operation needs (`pets:read` to
 * list and get, `pets:write` to create). `requiredScope` names it, from the response's
 * `WWW-Authenticate` challenge. Never retried: a new key, or new scopes for this one, is needed.
 */
export class InsufficientScopeError extends AnimalStoreError {
  override readonly name: string = 'InsufficientScopeError';
  declare readonly code: 'insufficient_scope';
  /** The scope the operation needs, when the challenge named it. */
  readonly requiredScope: string | undefined;

  constructor(init: ConstructorParameters<typeof AnimalStoreError>[0] & { requiredScope?: string }) {
    super({ ...init, code: 'insufficient_scope' });
    this.requiredScope = init.requiredScope;
  }
}

/** The `scope` of an RFC 6750 challenge: `Bearer realm="…", error="insufficient_scope", scope="pets:write"`. */
export function challengedScope(header: string | null): string | undefined {
  return /(?:^|[\s,])scope="([^"\\]*)"/.exec(header ?? '')?.[1];
}

/** Reads the rate-limit headers of a response; undefined when it has none (outside /v1). */
export function rateLimitOf(headers: Headers): RateLimitState | undefined {
  const limit = wholeNumber(headers.get('x-ratelimit-limit'));
  const remaining = wholeNumber(headers.get('x-ratelimit-remaining'));
  const reset = wholeNumber(headers.get('x-ratelimit-reset'));
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  const state: RateLimitState = { limit, remaining, resetAt: new Date(reset * 1000) };
  // RateLimit: "minute";r=59;t=41 — only the name is needed; the numbers are the triple's.
  const window = /^\s*"([^"\\]*)"/.exec(headers.get('ratelimit') ?? '')?.[1];
  if (window !== undefined) state.window = window;
  const retryAfter = retryAfterSecondsOf(headers);
  if (retryAfter !== undefined) state.retryAfterSeconds = retryAfter;
  return state;
}

/** Retry-After in seconds: delta-seconds, or an HTTP date (RFC 9110), else undefined. */
export function retryAfterSecondsOf(headers: Headers, nowMs = Date.now()): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = wholeNumber(value);
  if (seconds !== undefined) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - nowMs) / 1000));
}

function wholeNumber(text: string | null): number | undefined {
  return text !== null && /^\d{1,15}$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

/** The error for a non-2xx answer, from its (already parsed) body and headers. */
export function errorOf(response: Response, body: unknown): AnimalStoreError {
  const header = response.headers.get('x-request-id') ?? undefined;
  const rateLimit = rateLimitOf(response.headers);
  if (isErrorBody(body)) {
    const init = {
      code: body.code,
      status: response.status,
      message: body.message,
      details: body.details,
      requestId: typeof body.requestId === 'string' ? body.requestId : header,
      rateLimit,
    };
    if (body.code === 'insufficient_scope') {
      return new InsufficientScopeError({
        ...init,
        requiredScope: challengedScope(response.headers.get('www-authenticate')),
      });
    }
    return new AnimalStoreError(init);
  }
  const requestId = header;
  return new AnimalStoreError({
    code: 'unexpected_response',
    status: response.status,
    message: `HTTP ${response.status} without the service's Error body`,
    requestId,
    rateLimit,
  });
}

function isErrorBody(body: unknown): body is components['schemas']['Error'] {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.code === 'string' && typeof b.message === 'string' && typeof b.status === 'number';
}
