import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiErrorResponses } from '../errors/api-responses.decorator.js';
import { AUTH_MODE, AuthMode } from './auth-mode.js';

/** Name of the HTTP bearer security scheme in the OpenAPI document. */
export const BEARER_SCHEME = 'bearer';

/**
 * Marks a controller or handler as requiring a bearer API key, and documents exactly that
 * (bearer security and the 401 response) so enforcement and the OpenAPI document cannot drift.
 */
export function ApiKeyAuth(): ClassDecorator & MethodDecorator {
  return applyDecorators(
    SetMetadata<string, AuthMode>(AUTH_MODE, 'api-key'),
    ApiBearerAuth(BEARER_SCHEME),
    ApiErrorResponses(401),
  );
}
