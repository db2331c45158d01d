import { defineConfig, type ConfigOf } from './define-config.js';
import { oneOf } from './env.js';
import { runtimeConfig } from './runtime.config.js';

/** Logs: their level, and whether they are pretty-printed (development) or JSON lines. */
export const loggingConfig = defineConfig('logging', (env, use) => {
  const { nodeEnv } = use(runtimeConfig);
  return {
    logLevel: oneOf(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      nodeEnv === 'test' ? 'warn' : 'info',
    ),
    /** Development logs are pretty-printed; the logger reads the environment here, not from the runtime slice. */
    nodeEnv,
  };
});
export type LoggingConfig = ConfigOf<typeof loggingConfig>;
