import { defineConfig, type ConfigOf } from './define-config.js';
import { ConfigError, redactUrl, url, type Env } from './env.js';
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

function baseUrl(env: Env, name: string, fallback: string): string {
  const raw = url(env, name, ['http:', 'https:'], fallback) as string;
  const trimmed = raw.replace(/\/+$/, '');
  if (!trimmed.endsWith('/v1')) throw new ConfigError(`${name} must end in /v1, got "${redactUrl(raw)}"`);
  if (new URL(trimmed).search || new URL(trimmed).hash) {
    throw new ConfigError(`${name} must not carry a query or fragment, got "${redactUrl(raw)}"`);
  }
  return trimmed;
}
