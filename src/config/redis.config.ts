import { defineConfig, type ConfigOf } from './define-config.js';
import { int, url } from './env.js';

/** The Redis server shared by the instances (rate limits; readiness checks it). */
export const redisConfig = defineConfig('redis', (env) => ({
  redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
  /** Redis command and connect timeouts: past them a request is decided in memory instead. */
  redisCommandTimeoutMs: int(env, 'REDIS_COMMAND_TIMEOUT_MS', 500, 10, 60_000),
  redisConnectTimeoutMs: int(env, 'REDIS_CONNECT_TIMEOUT_MS', 2000, 10, 60_000),
}));
export type RedisConfig = ConfigOf<typeof redisConfig>;
