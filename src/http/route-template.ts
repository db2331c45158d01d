import type { Request } from 'express';
import { isMiddlewareRoute } from '../library-internals/index.js';

/** The label of requests that matched no route (404s, 405s, CORS preflights, rejected early). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route template a request matched, such as /v1/pets/:petId, for logs and metric labels:
 * bounded cardinality, unlike the raw path. Express keeps the matched route on req.route.
 */
export function routeTemplate(req: Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  // Middleware Nest mounts for every path is not an API route: the request matched none.
  if (!route || route.path === undefined || isMiddlewareRoute(route.path)) return UNMATCHED_ROUTE;
  return `${req.baseUrl ?? ''}${String(route.path)}`;
}
