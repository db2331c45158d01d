import { defineConfig, type ConfigOf } from './define-config.js';
import { int } from './env.js';

/** Readiness probes: how long one may take, and how long its outcome is reused. */
export const healthConfig = defineConfig('health', (env) => ({
  readinessTimeoutMs: int(env, 'READINESS_TIMEOUT_MS', 2000, 100, 60_000),
  /** How long a readiness outcome is reused by later probes (0: each probe checks, one at a time). */
  readinessCacheMs: int(env, 'READINESS_CACHE_MS', 1000, 0, 60_000),
}));
export type HealthConfig = ConfigOf<typeof healthConfig>;
