import proxyaddr from 'proxy-addr';
import { defineConfig, type ConfigOf } from './define-config.js';
import { int, str, type Reader } from './env.js';
import { checkListenHost } from './listen-address.js';
import { runtimeConfig, type NodeEnv } from './runtime.config.js';

/**
 * The HTTP server: where it listens, whom it trusts for client addresses, its timeouts. Its
 * start-up check resolves HOST, as listen will.
 */
export const serverConfig = defineConfig(
  'server',
  (env, use) => {
    const port = int(env, 'PORT', 3000, 0, 65535);
    const { nodeEnv } = use(runtimeConfig);
    const host = str(env, 'HOST', '0.0.0.0');
    const trustProxy = trustProxyOf(env, nodeEnv);
    const headersTimeoutMs = int(env, 'HEADERS_TIMEOUT_MS', 30_000, 1000, 600_000);
    const requestTimeoutMs = int(env, 'REQUEST_TIMEOUT_MS', 60_000, 1000, 3_600_000);
    // Node refuses a request timeout shorter than the headers timeout.
    if (requestTimeoutMs < headersTimeoutMs && env.ok('REQUEST_TIMEOUT_MS', 'HEADERS_TIMEOUT_MS')) {
      env.problem(
        `REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must not be below HEADERS_TIMEOUT_MS (${headersTimeoutMs})`,
        'REQUEST_TIMEOUT_MS',
      );
    }
    const testDelayHeader = str(env, 'ENABLE_TEST_DELAY', 'false') === 'true';
    if (testDelayHeader && nodeEnv !== 'test') {
      env.problem('ENABLE_TEST_DELAY is only allowed with NODE_ENV=test', 'ENABLE_TEST_DELAY');
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
  },
  async (server, env) => {
    if (env.ok('HOST')) await checkListenHost(env, 'HOST', server.host);
  },
);
export type ServerConfig = ConfigOf<typeof serverConfig>;

function trustProxyOf(env: Reader, nodeEnv: NodeEnv): boolean | number | string {
  const raw = str(env, 'TRUST_PROXY', 'false').trim();
  if (raw === 'false') return false;
  if (raw === 'true') {
    // Every hop trusted: a client's own X-Forwarded-For names any address it likes, and each
    // request can claim a new one, so per-address limits mean nothing.
    if (nodeEnv === 'production') {
      env.problem(
        'TRUST_PROXY=true trusts every hop, so clients choose their own address; in production give the number of ' +
          'proxies in front of the service (e.g. TRUST_PROXY=1 behind one load balancer) or their addresses or subnets',
        'TRUST_PROXY',
      );
      return false;
    }
    return true;
  }
  if (/^\d+$/.test(raw)) return Number(raw);
  const problem = trustListProblem(raw);
  if (problem === undefined) return raw;
  env.problem(
    `TRUST_PROXY must be true, false, a hop count or a comma-separated list of addresses, subnets ` +
      `or loopback, linklocal, uniquelocal; got "${raw.slice(0, 100)}" (${problem})`,
    'TRUST_PROXY',
  );
  return false;
}

/**
 * Why Express would refuse `raw` as its "trust proxy" list, or undefined when it takes it.
 * Express splits the string on commas, trims each entry and compiles the list with proxy-addr,
 * which throws a TypeError naming the first entry it cannot read; the same call decides here.
 */
export function trustListProblem(raw: string): string | undefined {
  try {
    proxyaddr.compile(raw.split(',').map((entry) => entry.trim()));
    return undefined;
  } catch (err) {
    if (err instanceof TypeError) return err.message;
    throw err;
  }
}
