/**
 * Which methods the app's router serves for a path: the difference between 404
 * route_not_found and 405 method_not_allowed. Read from Express's own routing table so it can
 * never disagree with the routes Nest registered.
 */
interface RouteLayer {
  route?: { path?: unknown; methods: Record<string, boolean> };
  match(path: string): boolean;
}

export function allowedMethods(app: unknown, path: string): string[] {
  const stack = (app as { router?: { stack?: RouteLayer[] } })?.router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route) continue;
    // Nest mounts middleware for every path (the request logger) as app.all('{/*splat}'):
    // such a route lists every method but serves none. No route of the API has a wildcard.
    if (String(layer.route.path).includes('*')) continue;
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
