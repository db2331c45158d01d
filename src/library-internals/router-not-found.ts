import type { HttpException } from '@nestjs/common';

/**
 * Internal: the message of the NotFoundException Nest throws when no route matches, `Cannot
 * GET /x` (RoutesResolver.registerNotFoundHandler, checked against @nestjs/core 12.5.1). Nest
 * gives the exception no other mark, and a handler's own 404 (a pet that does not exist) must
 * not become route_not_found. Canary: router-not-found.spec.ts.
 */
/** `Cannot <METHOD> `: the methods Node's parser accepts are capitals and hyphens (`M-SEARCH`). */
const ROUTER_MESSAGE = /^Cannot [A-Z][A-Z-]* /;

export function isRouterNotFound(e: HttpException): boolean {
  return e.getStatus() === 404 && ROUTER_MESSAGE.test(e.message);
}
