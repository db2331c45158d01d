import { defineConfig, type ConfigOf } from './define-config.js';
import { ConfigError, int, str, type Env } from './env.js';
import { runtimeConfig, type NodeEnv } from './runtime.config.js';

/** The HTTP server: where it listens, whom it trusts for client addresses, its timeouts. */
export const serverConfig = defineConfig('server', (env, use) => {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const { nodeEnv } = use(runtimeConfig);
  const host = str(env, 'HOST', '0.0.0.0');
  const trustProxy = trustProxyOf(env, nodeEnv);
  const headersTimeoutMs = int(env, 'HEADERS_TIMEOUT_MS', 30_000, 1000, 600_000);
  const requestTimeoutMs = int(env, 'REQUEST_TIMEOUT_MS', 60_000, 1000, 3_600_000);
  // Node refuses a request timeout shorter than the headers timeout.
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConfigError(
      `REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must not be below HEADERS_TIMEOUT_MS (${headersTimeoutMs})`,
    );
  }
  const testDelayHeader = str(env, 'ENABLE_TEST_DELAY', 'false') === 'true';
  if (testDelayHeader && nodeEnv !== 'test') {
    throw new ConfigError('ENABLE_TEST_DELAY is only allowed with NODE_ENV=test');
  }
  return {
    host,
    port,
    /** Express "trust proxy" value: false, true, a hop count, or a list of addresses/subnets. */
    trustProxy,
    // Above the idle timeout of common balancers (AWS ALB 60 s), so they close idle connections first.
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 65_000, 1000, 600_000),
    headersTimeoutMs,
    requestTimeoutMs,
    /**
     * Most connections open at once (Node's server.maxConnections): a connection beyond it is
     * closed as soon as it is accepted, so no client can hold every socket and file descriptor.
     */
    maxConnections: int(env, 'MAX_CONNECTIONS', 1000, 1, 1_000_000),
    /** How often Node checks the headers and request timeouts (its connectionsCheckingInterval). */
    connectionsCheckIntervalMs: int(env, 'CONNECTIONS_CHECK_INTERVAL_MS', 30_000, 100, 600_000),
    /** Test only (NODE_ENV=test): honour an X-Test-Delay-Ms request header, for shutdown tests. */
    testDelayHeader,
  };
});
export type ServerConfig = ConfigOf<typeof serverConfig>;

function trustProxyOf(env: Env, nodeEnv: NodeEnv): boolean | number | string {
  const raw = str(env, 'TRUST_PROXY', 'false').trim();
  if (raw === 'false') return false;
  if (raw === 'true') {
    // Every hop trusted: a client's own X-Forwarded-For names any address it likes, and each
    // request can claim a new one, so per-address limits mean nothing.
    if (nodeEnv === 'production') {
      throw new ConfigError(
        'TRUST_PROXY=true trusts every hop, so clients choose their own address; in production give the number of ' +
          'proxies in front of the service (e.g. TRUST_PROXY=1 behind one load balancer) or their addresses or subnets',
      );
    }
    return true;
  }
  if (/^\d+$/.test(raw)) return Number(raw);
  // A comma-separated list of addresses, subnets or the names Express knows
  // (loopback, linklocal, uniquelocal); Express validates each entry when it is set.
  if (/^[0-9A-Za-z.:/,\s]+$/.test(raw)) return raw;
  throw new ConfigError(`TRUST_PROXY must be true, false, a hop count or a list of addresses, got "${raw}"`);
}
