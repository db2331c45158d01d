import { defineConfig, type ConfigOf } from './define-config.js';
import { str, type Reader } from './env.js';

/** Cross-origin requests from browsers. */
export const corsConfig = defineConfig('cors', (env) => ({
  /** Origins allowed by CORS; empty: CORS disabled. ['*'] allows any origin. */
  corsOrigins: corsOrigins(env, str(env, 'CORS_ORIGINS', '').trim()),
}));
export type CorsConfig = ConfigOf<typeof corsConfig>;

function corsOrigins(env: Reader, raw: string): string[] {
  if (raw === '') return [];
  const origins = raw
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  if (origins.includes('*')) {
    if (origins.length > 1) {
      env.problem('CORS_ORIGINS is either * or a list of origins, not both', 'CORS_ORIGINS');
      return [];
    }
    return ['*'];
  }
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    // An origin is scheme://host[:port], exactly as browsers send it: no path, no trailing slash.
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      env.problem(
        `CORS_ORIGINS entries must be origins such as https://app.example.com, got "${origin.slice(0, 100)}"`,
        'CORS_ORIGINS',
      );
      return [];
    }
  }
  return origins;
}
