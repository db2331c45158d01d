import type { OpenAPIObject } from '@nestjs/swagger';

type HeaderObject = {
  description: string;
  schema: { type: 'integer'; minimum?: number } | { type: 'string'; example: string };
};
type Response = { headers?: Record<string, HeaderObject | { $ref: string }> };

/** The rate-limit headers every /v1 response carries (docs/api.md, "Rate limits"). */
export const RATE_LIMIT_HEADER_DOCS: Record<string, HeaderObject> = {
  'X-RateLimit-Limit': {
    description:
      'Requests allowed in the rate-limit window closest to exhaustion (per minute or per day, by plan; without a valid API key, the free plan per client address).',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in that window (0 while refused or banned).',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'Unix time (seconds) at which that window resets, or the ban ends.',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Policy': {
    description:
      'The quota policies in force (IETF draft-ietf-httpapi-ratelimit-headers-11, a Structured Field list): each window by name, with its quota `q` (requests) and length `w` (seconds). Always both windows, `minute` and `day`, with the limits of the API key (or of the free plan per client address).',
    schema: { type: 'string', example: '"minute";q=60;w=60, "day";q=1000;w=86400' },
  },
  RateLimit: {
    description:
      'The state of the window closest to exhaustion, the one X-RateLimit-* describe (IETF draft-ietf-httpapi-ratelimit-headers-11): its name, the requests remaining `r` (X-RateLimit-Remaining) and the seconds `t` until it resets (X-RateLimit-Reset minus now; Retry-After on a 429). While the key is banned, `r=0` and `t` runs to the end of the ban.',
    schema: { type: 'string', example: '"minute";r=59;t=41' },
  },
};

export const RETRY_AFTER_DOC: HeaderObject = {
  description:
    'Whole seconds to wait before retrying (at least 1): until the exhausted window resets, or the ban ends.',
  schema: { type: 'integer', minimum: 1 },
};

/**
 * Adds the rate-limit headers to every response of every operation under `/v1` (and
 * Retry-After to its 429), as shared components referenced from each response.
 */
export function documentRateLimitHeaders(doc: OpenAPIObject): void {
  doc.components ??= {};
  const components = doc.components as { headers?: Record<string, HeaderObject> };
  components.headers = { ...components.headers, ...RATE_LIMIT_HEADER_DOCS, RateLimitRetryAfter: RETRY_AFTER_DOC };
  for (const [path, item] of Object.entries(doc.paths)) {
    if (path !== '/v1' && !path.startsWith('/v1/')) continue;
    for (const operation of Object.values(item as Record<string, { responses?: Record<string, Response> }>)) {
      if (typeof operation !== 'object' || !operation?.responses) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = { ...response.headers };
        for (const name of Object.keys(RATE_LIMIT_HEADER_DOCS))
          headers[name] = { $ref: `#/components/headers/${name}` };
        if (status === '429') headers['Retry-After'] = { $ref: '#/components/headers/RateLimitRetryAfter' };
        response.headers = headers;
      }
    }
  }
}
