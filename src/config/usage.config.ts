import { defineConfig, type ConfigOf } from './define-config.js';
import { int } from './env.js';

/** Usage per key and hour: how often each instance writes its counts, and how long rows are kept. */
export const usageConfig = defineConfig('usage', (env) => ({
  /** Each instance writes the counts it holds at most this often (and once more on SIGTERM). */
  usageFlushMs: int(env, 'USAGE_FLUSH_MS', 10_000, 100, 600_000),
  /** Hours older than this many days are deleted. */
  usageRetentionDays: int(env, 'USAGE_RETENTION_DAYS', 400, 1, 36_500),
}));
export type UsageConfig = ConfigOf<typeof usageConfig>;
