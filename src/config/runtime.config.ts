import { defineConfig, type ConfigOf } from './define-config.js';
import { oneOf } from './env.js';

/** The environment the process runs in; other slices take their defaults and rules from it. */
export const runtimeConfig = defineConfig('runtime', (env) => ({
  nodeEnv: oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development'),
}));
export type RuntimeConfig = ConfigOf<typeof runtimeConfig>;
export type NodeEnv = RuntimeConfig['nodeEnv'];
