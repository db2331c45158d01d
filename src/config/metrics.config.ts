import { isIP } from 'node:net';
import { defineConfig, type ConfigOf } from './define-config.js';
import { ConfigError, int, optional } from './env.js';
import { runtimeConfig } from './runtime.config.js';
import { serverConfig } from './server.config.js';

/** Who may read /metrics, and on which port it is served. */
export const metricsConfig = defineConfig('metrics', (env, use) => {
  const { nodeEnv } = use(runtimeConfig);
  const { port } = use(serverConfig);
  const metricsToken = optional(env, 'METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) {
    throw new ConfigError(`METRICS_TOKEN must be at least 16 characters long, got ${metricsToken.length}`);
  }
  const metricsPort = optional(env, 'METRICS_PORT') === undefined ? undefined : int(env, 'METRICS_PORT', 0, 1, 65535);
  if (metricsPort !== undefined && metricsPort === port) {
    throw new ConfigError(`METRICS_PORT must differ from PORT (${port}): metrics get a listener of their own`);
  }
  // Open metrics on the public port tell anyone the traffic, the errors and the process's
  // insides; in production they need a token, or a port of their own kept off the public network.
  if (nodeEnv === 'production' && metricsToken === undefined && metricsPort === undefined) {
    throw new ConfigError(
      'METRICS_TOKEN or METRICS_PORT is required with NODE_ENV=production: set a token for /metrics, or serve it on an internal port',
    );
  }
  return {
    /**
     * Interface the METRICS_PORT listener binds: loopback unless the operator opens it (a
     * scraper on another host needs e.g. 0.0.0.0, and then METRICS_TOKEN).
     */
    metricsHost: host(optional(env, 'METRICS_HOST') ?? '127.0.0.1'),
    /** Bearer token /metrics requires; undefined: open (keep it off the public network). */
    metricsToken,
    /** Serve /metrics on this port only (a listener of its own), not on PORT. */
    metricsPort,
  };
});
function host(value: string): string {
  if (isIP(value) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(value)) {
    throw new ConfigError(
      `METRICS_HOST must be an IP address or a host name to listen on, got "${value.slice(0, 100)}"`,
    );
  }
  return value;
}

export type MetricsConfig = ConfigOf<typeof metricsConfig>;
