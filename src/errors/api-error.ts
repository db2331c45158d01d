/** Stable, machine-readable error codes of the Error body (docs/api.md, "Errors"). */
export const ERROR_CODES = [
  'malformed_json',
  'validation_failed',
  'invalid_parameter',
  'unknown_parameter',
  'missing_api_key',
  'invalid_api_key',
  'invalid_signature',
  'api_key_expired',
  'insufficient_scope',
  'not_found',
  'route_not_found',
  'method_not_allowed',
  'unsupported_media_type',
  'payload_too_large',
  'headers_too_large',
  'expectation_failed',
  'request_timeout',
  'idempotency_key_reused',
  'idempotency_key_in_flight',
  'rate_limit_exceeded',
  'api_key_temporarily_banned',
  'gone',
  'service_unavailable',
  'not_implemented',
  'internal_error',
] as const;

/**
 * The codes only the admin API answers with (its bearer admin token); the public API's document
 * does not list them.
 */
export const ADMIN_ERROR_CODES = ['missing_admin_token', 'invalid_admin_token'] as const;

/** The codes only the operator console answers with (docs/admin-console.md); in neither API document. */
export const CONSOLE_ERROR_CODES = ['cross_site_request'] as const;

export type ErrorCode =
  (typeof ERROR_CODES)[number] | (typeof ADMIN_ERROR_CODES)[number] | (typeof CONSOLE_ERROR_CODES)[number];

/** The one HTTP status of each code: `new ApiError(code, …)` answers with it, everywhere. */
export const ERROR_STATUS = {
  malformed_json: 400,
  validation_failed: 400,
  invalid_parameter: 400,
  unknown_parameter: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  invalid_signature: 401,
  api_key_expired: 401,
  missing_admin_token: 401,
  invalid_admin_token: 401,
  insufficient_scope: 403,
  cross_site_request: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_key_in_flight: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  idempotency_key_reused: 422,
  rate_limit_exceeded: 429,
  api_key_temporarily_banned: 429,
  headers_too_large: 431,
  internal_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
} as const satisfies Record<ErrorCode, number>;

export interface ErrorDetail {
  field: string;
  message: string;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
  /** The response's X-Request-Id, so the body alone can be quoted to support. */
  requestId: string;
  details?: ErrorDetail[];
}

/**
 * The one exception type the service throws on purpose. The global filter turns it into the
 * Error body; `headers` are set on the response as well (Retry-After, Allow, ...).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
    this.name = 'ApiError';
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /** The Error body, with the id of the request it answers (sent as X-Request-Id too). */
  toBody(requestId: string): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message, status: this.status, requestId };
    if (this.details && this.details.length > 0) body.details = this.details;
    return body;
  }
}
