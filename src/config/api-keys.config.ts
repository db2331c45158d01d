import { defineConfig, type ConfigOf } from './define-config.js';
import { ConfigError, int, optional } from './env.js';

/** API keys: how they are hashed at rest and how long a lookup is reused. */
export const apiKeysConfig = defineConfig('apiKeys', (env) => {
  const apiKeyPepper = optional(env, 'API_KEY_PEPPER');
  // The value itself is never repeated in the message: it is a secret.
  if (apiKeyPepper !== undefined && apiKeyPepper.length < 32) {
    throw new ConfigError(`API_KEY_PEPPER must be at least 32 characters long, got ${apiKeyPepper.length}`);
  }
  return {
    /** Secret mixed into stored API key hashes (HMAC-SHA256); undefined: plain SHA-256. */
    apiKeyPepper,
    /**
     * How long an API key lookup (found, unknown or revoked) is cached in process. Bounded
     * below 5 s so a key revoked anywhere is refused by every instance within 5 s (contract).
     */
    apiKeyCacheTtlMs: int(env, 'API_KEY_CACHE_TTL_MS', 2000, 0, 4999),
  };
});
export type ApiKeysConfig = ConfigOf<typeof apiKeysConfig>;
