import { defineConfig, type ConfigOf } from './define-config.js';
import { int, optional, type Reader } from './env.js';
import { runtimeConfig } from './runtime.config.js';

/** Values docker-compose.yml ships so the stack starts; production refuses them. */
const PLACEHOLDER_PREFIX = 'REPLACE-ME';
const HOW_TO_MAKE_ONE = 'generate one with `openssl rand -base64 48` and keep it in your secret store';

/** A secret of at least 32 characters; never repeated in a message. */
function secret(env: Reader, name: string, production: boolean): string | undefined {
  const value = optional(env, name);
  if (value === undefined) return undefined;
  if (value.length < 32) {
    env.problem(`${name} must be at least 32 characters long, got ${value.length}: ${HOW_TO_MAKE_ONE}`, name);
    return undefined;
  }
  if (production && value.startsWith(PLACEHOLDER_PREFIX)) {
    env.problem(
      `${name} is the placeholder of docker-compose.yml, which NODE_ENV=production refuses: ${HOW_TO_MAKE_ONE}`,
      name,
    );
    return undefined;
  }
  return value;
}

/** API keys: how they are checked without I/O, hashed at rest, looked up and cached. */
export const apiKeysConfig = defineConfig('apiKeys', (env, use) => {
  const production = use(runtimeConfig).nodeEnv === 'production';
  const apiKeyChecksumSecret = secret(env, 'API_KEY_CHECKSUM_SECRET', production);
  if (production && apiKeyChecksumSecret === undefined && env.ok('API_KEY_CHECKSUM_SECRET')) {
    env.problem(
      `API_KEY_CHECKSUM_SECRET is required with NODE_ENV=production (it signs new API keys): ${HOW_TO_MAKE_ONE}`,
      'API_KEY_CHECKSUM_SECRET',
    );
  }
  return {
    /** Secret mixed into stored API key hashes (HMAC-SHA256); undefined: plain SHA-256. */
    apiKeyPepper: secret(env, 'API_KEY_PEPPER', production),
    /** Key of version 2 keys' checksums; undefined: new keys are version 1 and version 2 keys are refused. */
    apiKeyChecksumSecret,
    /**
     * How long an API key lookup (found, unknown or revoked) is cached in process. Bounded
     * below 5 s so a key revoked anywhere is refused by every instance within 5 s.
     */
    apiKeyCacheTtlMs: int(env, 'API_KEY_CACHE_TTL_MS', 2000, 0, 4999),
    /** Failed lookups of version 1 keys an address may cause per minute before its new ones are refused unlooked. */
    apiKeyFailedLookupsPerAddress: int(env, 'API_KEY_FAILED_LOOKUPS_PER_ADDRESS', 10, 1, 1_000_000),
    /** Lookups of version 1 keys this instance has never found, per second, across all addresses. */
    apiKeyUnknownLookupsPerSecond: int(env, 'API_KEY_UNKNOWN_LOOKUPS_PER_SECOND', 50, 1, 1_000_000),
  };
});
export type ApiKeysConfig = ConfigOf<typeof apiKeysConfig>;
