import helmet, { type HelmetOptions } from 'helmet';
import { jsonOnlyHeaders, type EdgeHeaders } from '../../http/http-edge.js';
import { recordHeaders, type RecordedHeaders } from '../../library-internals/helmet-recorder.js';
import { ADMIN_BASE_PATH, ADMIN_OPENAPI_PATH } from '../admin-paths.js';

/**
 * The console's policy: its pages load only their own scripts, styles and images (uPlot's
 * canvas exports none), post forms only to themselves, and cannot be framed. No inline script
 * or style is allowed, so the pages carry none. Referrer-Policy same-origin, not no-referrer:
 * with no-referrer, browsers send `Origin: null` on the console's own form posts.
 */
export const CONSOLE_HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      frameAncestors: ["'none'"],
      objectSrc: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
    },
  },
  referrerPolicy: { policy: 'same-origin' },
  xFrameOptions: { action: 'deny' },
};

/** Whether a path of the admin listener is the console's (everything under /admin but the API and its document). */
export function isConsolePath(path: string): boolean {
  const p = path.toLowerCase();
  if (p === ADMIN_OPENAPI_PATH || p === ADMIN_BASE_PATH || p.startsWith(`${ADMIN_BASE_PATH}/`)) return false;
  return p === '/admin' || p.startsWith('/admin/');
}

/** The admin listener's headers: the console's policy on its pages and assets, the API's elsewhere; no-store on all. */
export function adminListenerHeaders(): EdgeHeaders {
  const api = jsonOnlyHeaders();
  const recorded = recordHeaders(helmet(CONSOLE_HELMET_OPTIONS));
  const console: RecordedHeaders = { set: [...recorded.set, ['Cache-Control', 'no-store']], removed: recorded.removed };
  return { forPath: (path) => (isConsolePath(path) ? console : api.forPath(path)) };
}
