import { defineConfig, type ConfigOf } from './define-config.js';
import { int, type Reader } from './env.js';

/** Rate limits beyond the plans' own: bans of abusive keys and addresses, and the counters' bounds. */
export const rateLimitConfig = defineConfig('rateLimit', (env) => ({
  /** More rejected requests than this in one limited period ban the key (or address). */
  rateLimitBanThreshold: int(env, 'RATE_LIMIT_BAN_THRESHOLD', 20, 0, 1_000_000),
  rateLimitBanSeconds: int(env, 'RATE_LIMIT_BAN_SECONDS', 900, 1, 7 * 86_400),
  /** Prefix of the rate limiter's Redis keys. */
  rateLimitPrefix: keyPrefix(env, 'RATE_LIMIT_PREFIX', 'animal-store:rl:'),
  /** Most subjects (keys, addresses) the in-memory rate limiter holds. */
  rateLimitMemoryMaxKeys: int(env, 'RATE_LIMIT_MEMORY_MAX_KEYS', 100_000, 100, 100_000_000),
  /** Most bytes (estimated) the in-memory rate limiter holds. */
  rateLimitMemoryMaxBytes: int(
    env,
    'RATE_LIMIT_MEMORY_MAX_BYTES',
    64 * 1024 * 1024,
    1024 * 1024,
    64 * 1024 * 1024 * 1024,
  ),
}));
export type RateLimitConfig = ConfigOf<typeof rateLimitConfig>;

function keyPrefix(env: Reader, name: string, fallback: string): string {
  const raw = env.raw(name) ?? fallback;
  // No braces: the rate limiter uses {...} as the Redis Cluster hash tag after the prefix.
  if (!/^[A-Za-z0-9:._-]{0,64}$/.test(raw)) {
    env.problem(`${name} must be at most 64 letters, digits or : . _ -, got "${raw.slice(0, 100)}"`, name);
    return fallback;
  }
  return raw;
}
