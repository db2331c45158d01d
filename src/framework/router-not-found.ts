import type { HttpException } from '@nestjs/common';

/**
 * Internal: the message of the NotFoundException Nest throws when no route matches, `Cannot
 * GET /x` (RoutesResolver.registerNotFoundHandler, checked against @nestjs/core 12.5.1). Nest
 * gives the exception no other mark, and a handler's own 404 (a pet that does not exist) must
 * not become route_not_found. Canary: router-not-found.spec.ts.
 */
export function isRouterNotFound(e: HttpException): boolean {
  return e.getStatus() === 404 && /^Cannot [A-Z]+ /.test(e.message);
}
