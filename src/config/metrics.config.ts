import { defineConfig, type ConfigOf } from './define-config.js';
import { int, optional } from './env.js';
import { checkListenHost, checkOwnPort, listenHostShape } from './listen-address.js';
import { runtimeConfig } from './runtime.config.js';
import { serverConfig } from './server.config.js';

/**
 * Who may read /metrics, and on which port it is served. Its start-up check resolves
 * METRICS_HOST when METRICS_PORT gives metrics a listener of their own.
 */
export const metricsConfig = defineConfig(
  'metrics',
  (env, use) => {
    const { nodeEnv } = use(runtimeConfig);
    const { port } = use(serverConfig);
    const metricsToken = optional(env, 'METRICS_TOKEN');
    if (metricsToken !== undefined && metricsToken.length < 16) {
      env.problem(`METRICS_TOKEN must be at least 16 characters long, got ${metricsToken.length}`, 'METRICS_TOKEN');
    }
    const metricsPort = optional(env, 'METRICS_PORT') === undefined ? undefined : int(env, 'METRICS_PORT', 0, 1, 65535);
    checkOwnPort(env, { name: 'METRICS_PORT', port: metricsPort }, [{ name: 'PORT', port }]);
    // Open metrics on the public port tell anyone the traffic, the errors and the process's
    // insides; in production they need a token, or a port of their own kept off the public network.
    if (
      nodeEnv === 'production' &&
      metricsToken === undefined &&
      metricsPort === undefined &&
      env.ok('METRICS_TOKEN', 'METRICS_PORT')
    ) {
      env.problem(
        'METRICS_TOKEN or METRICS_PORT is required with NODE_ENV=production: set a token for /metrics, or serve it on an internal port',
        'METRICS_TOKEN',
      );
    }
    return {
      /**
       * Interface the METRICS_PORT listener binds: loopback unless the operator opens it (a
       * scraper on another host needs e.g. 0.0.0.0, and then METRICS_TOKEN).
       */
      metricsHost: listenHostShape(env, 'METRICS_HOST', optional(env, 'METRICS_HOST') ?? '127.0.0.1'),
      /** Bearer token /metrics requires; undefined: open (keep it off the public network). */
      metricsToken,
      /** Serve /metrics on this port only (a listener of its own), not on PORT. */
      metricsPort,
    };
  },
  async (metrics, env) => {
    if (metrics.metricsPort !== undefined && env.ok('METRICS_HOST')) {
      await checkListenHost(env, 'METRICS_HOST', metrics.metricsHost);
    }
  },
);

export type MetricsConfig = ConfigOf<typeof metricsConfig>;
