/**
 * Configuration: every environment variable the service reads, validated once at start-up.
 * Nothing else in the code reads process.env.
 *
 * It is cut into slices, one per concern (server, database, rate limits, metrics...), each a
 * file here with its own loader and its own injection token: a consumer injects the slice it
 * uses (`@Inject(rateLimitConfig.token) config: RateLimitConfig`) and sees no other. Each entry
 * point validates the slices it uses before it acts (exit-on-config-error.ts): the server all of
 * them (CONFIG_SLICES), the migrate command the database's, the key tool the database's and the
 * API keys'. A bad value does not stop the load: every problem of one start is reported in one
 * message, and the process exits 78. ConfigModule then provides each slice.
 *
 * Why defineConfig (define-config.ts) and not @nestjs/config's registerAs: @nestjs/config is
 * not a dependency; its factories read process.env themselves and are run by Nest, whereas the
 * CLI tool, the migrator and the bench load configuration without booting Nest, and tests pass
 * an environment of their own. A loader here takes the environment as an argument, and the
 * slices its rules span (NODE_ENV=production wants METRICS_TOKEN or METRICS_PORT) through
 * `use(runtimeConfig)`, each loaded once per load: about fifty lines, typed end to end.
 *
 * Why the slices live here and not in their features' folders: config is kernel, and the
 * migrator (database/, kernel) loads slices too, so they must be importable from the kernel,
 * which never imports a feature. A slice is parsing (and, where a value is only known good once
 * tried, a bounded start-up check: HOST resolved, DATA_DIR made); it names no feature code.
 */
import { adminConfig } from './admin.config.js';
import { apiKeysConfig } from './api-keys.config.js';
import { corsConfig } from './cors.config.js';
import { databaseConfig } from './database.config.js';
import { loadSlices, type ConfigOf } from './define-config.js';
import type { Env } from './env.js';
import { healthConfig } from './health.config.js';
import { leakedKeysConfig } from './leaked-keys.config.js';
import { webhooksConfig } from './webhooks.config.js';
import { loggingConfig } from './logging.config.js';
import { metricsConfig } from './metrics.config.js';
import { publicUrlsConfig } from './public-urls.config.js';
import { rateLimitConfig } from './rate-limit.config.js';
import { redisConfig } from './redis.config.js';
import { runtimeConfig } from './runtime.config.js';
import { serverConfig } from './server.config.js';
import { shutdownConfig } from './shutdown.config.js';
import { tracingConfig } from './tracing.config.js';
import { usageConfig } from './usage.config.js';

export { ConfigError, redactUrl } from './env.js';

/** Every slice (the server's configuration), under the key AppConfig holds it by. */
export const CONFIG_SLICES = {
  server: serverConfig,
  runtime: runtimeConfig,
  database: databaseConfig,
  redis: redisConfig,
  rateLimit: rateLimitConfig,
  publicUrls: publicUrlsConfig,
  logging: loggingConfig,
  shutdown: shutdownConfig,
  health: healthConfig,
  metrics: metricsConfig,
  cors: corsConfig,
  apiKeys: apiKeysConfig,
  tracing: tracingConfig,
  admin: adminConfig,
  usage: usageConfig,
  leakedKeys: leakedKeysConfig,
  webhooks: webhooksConfig,
};

/** The whole configuration, one validated slice per concern. */
export type AppConfig = { [K in keyof typeof CONFIG_SLICES]: ConfigOf<(typeof CONFIG_SLICES)[K]> };

export function loadConfig(env: Env = process.env): AppConfig {
  return loadSlices(CONFIG_SLICES, env);
}
