import { defineConfig, type ConfigOf } from './define-config.js';
import { int } from './env.js';
import { runtimeConfig } from './runtime.config.js';

/** Graceful shutdown: how long readiness fails before the listener closes, and how long requests may finish. */
export const shutdownConfig = defineConfig('shutdown', (env, use) => ({
  // In production the balancer needs time to see readiness fail before the listener closes.
  shutdownDelayMs: int(env, 'SHUTDOWN_DELAY_MS', use(runtimeConfig).nodeEnv === 'production' ? 5000 : 0, 0, 600_000),
  shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
}));
export type ShutdownConfig = ConfigOf<typeof shutdownConfig>;
