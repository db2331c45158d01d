import { defineConfig, type ConfigOf } from './define-config.js';
import { redactUrl, url, type Reader } from './env.js';
import { serverConfig } from './server.config.js';

/** Where clients reach the API: Link and Location headers, and the servers of the OpenAPI document. */
export const publicUrlsConfig = defineConfig('publicUrls', (env, use) => {
  const local = `http://localhost:${use(serverConfig).port}/v1`;
  return {
    /** Public base URL ending in /v1, used for Link and Location headers. */
    publicBaseUrl: baseUrl(env, 'PUBLIC_BASE_URL', local),
    stagingBaseUrl: baseUrl(env, 'STAGING_BASE_URL', local),
  };
});
export type PublicUrlsConfig = ConfigOf<typeof publicUrlsConfig>;

function baseUrl(env: Reader, name: string, fallback: string): string {
  const raw = url(env, name, ['http:', 'https:'], fallback);
  if (raw === undefined) return fallback;
  const trimmed = raw.replace(/\/+$/, '');
  if (!trimmed.endsWith('/v1')) {
    env.problem(`${name} must end in /v1, got "${redactUrl(raw)}"`, name);
    return fallback;
  }
  if (new URL(trimmed).search || new URL(trimmed).hash) {
    env.problem(`${name} must not carry a query or fragment, got "${redactUrl(raw)}"`, name);
    return fallback;
  }
  return trimmed;
}
