import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiExtension, ApiResponse } from '@nestjs/swagger';
import { ApiErrorResponses, exampleBody } from '../errors/api-responses.decorator.js';
import { ErrorDto } from '../errors/error.dto.js';
import { AUTH_MODE, AuthMode, KEY_ROUTE, type KeyRoute } from './auth-mode.js';
import type { Scope } from '../api-keys/scopes.js';
import type { KeyOperation } from '../api-keys/operations.js';

/** Name of the HTTP bearer security scheme in the OpenAPI document. */
export const BEARER_SCHEME = 'bearer';

/** The OpenAPI extension that lists the scopes an operation needs (bearer schemes have none in OpenAPI 3.0). */
export const REQUIRED_SCOPES_EXTENSION = 'x-required-scopes';

/** The RFC 6750 challenge of a key without the scope an operation needs. */
export function insufficientScopeChallenge(scope: Scope): string {
  return `Bearer realm="animal-store", error="insufficient_scope", scope="${scope}"`;
}

export interface ApiKeyAuthOptions {
  /** The scope the key must hold; none: any valid key. */
  scope?: Scope;
  /**
   * false: the request is not counted against the key's rate limits (getRateLimit), only
   * against the small budget of uncounted reads (docs/rate-limits.md).
   */
  counted?: boolean;
  /** The operation the key's usage is recorded under (its operationId). */
  operation?: KeyOperation;
}

/**
 * Marks a controller or handler as requiring a bearer API key, with the scope it needs, and
 * documents exactly that (bearer security, the 401, the scope and its 403) so enforcement and
 * the OpenAPI document cannot drift: AdmissionGuard reads the same metadata.
 */
export function ApiKeyAuth(options: ApiKeyAuthOptions = {}): ClassDecorator & MethodDecorator {
  const route: KeyRoute = { scope: options.scope, counted: options.counted ?? true, operation: options.operation };
  const decorators = [
    SetMetadata<string, AuthMode>(AUTH_MODE, 'api-key'),
    SetMetadata<string, KeyRoute>(KEY_ROUTE, route),
    ApiBearerAuth(BEARER_SCHEME),
    ApiErrorResponses({ status: 401, codes: ['missing_api_key', 'invalid_api_key', 'api_key_expired'] }),
  ];
  if (options.scope !== undefined) {
    decorators.push(
      ApiExtension(REQUIRED_SCOPES_EXTENSION, [options.scope]),
      ApiResponse({
        status: 403,
        description: `The API key lacks the scope \`${options.scope}\` this operation needs (\`insufficient_scope\`).`,
        type: ErrorDto,
        examples: {
          insufficient_scope: {
            summary: 'insufficient_scope',
            value: {
              ...exampleBody(403, 'insufficient_scope'),
              message: `This API key lacks the scope ${options.scope} this operation needs.`,
            },
          },
        },
        headers: {
          'WWW-Authenticate': {
            description: 'The RFC 6750 challenge naming the scope needed.',
            schema: { type: 'string', example: insufficientScopeChallenge(options.scope) },
          },
        },
      }),
    );
  }
  return applyDecorators(...decorators);
}
