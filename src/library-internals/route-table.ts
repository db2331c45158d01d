/**
 * Internal: Express's routing table, `app.router.stack` (checked against express 5.3.0, whose
 * router is router 2.3.0), and the wildcard route under which Nest mounts middleware
 * (@nestjs/core 12.5.1). Canary: route-table.spec.ts.
 *
 * Which methods the app's router serves for a path: the difference between 404
 * route_not_found and 405 method_not_allowed. Read from Express's own routing table so it can
 * never disagree with the routes Nest registered. Neither Express nor Nest offers this as an
 * API (Express answers OPTIONS with such a list, but only from inside the router).
 */
interface RouteLayer {
  route?: { path?: unknown; methods: Record<string, boolean> };
  match(path: string): boolean;
}

/**
 * Whether a route path is a wildcard: middleware bound to one method on every path
 * (`forRoutes({ path: '*', method })`) is mounted by Nest as a route of that method on a
 * wildcard path, which serves nothing. No route of the API has a wildcard. (Middleware for all
 * methods is mounted with app.use, no route, or on an exact path with app.all, whose methods
 * are only `_all`. Middleware bound to one method on one path is a route of that method: bind
 * it only where a route serves that method.)
 */
export function isMiddlewareRoute(path: unknown): boolean {
  return String(path).includes('*');
}

export function allowedMethods(app: unknown, path: string): string[] {
  const stack = (app as { router?: { stack?: RouteLayer[] } })?.router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route || isMiddlewareRoute(layer.route.path)) continue;
    let matched: boolean;
    try {
      matched = layer.match(path);
    } catch {
      matched = false; // a malformed percent-encoding in the path
    }
    if (!matched) continue;
    for (const [m, on] of Object.entries(layer.route.methods)) {
      if (on && m !== '_all') methods.add(m.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
