/**
 * Configuration: every environment variable the service reads, validated once at start-up.
 * A bad value stops the process with a message naming the variable (see loadConfig).
 * Nothing else in the code reads process.env.
 */
export interface AppConfig {
  nodeEnv: 'development' | 'production' | 'test';
  host: string;
  port: number;
  /** PostgreSQL connection string; undefined selects the embedded database (PGlite). */
  databaseUrl?: string;
  /** Data directory of the embedded database. */
  dataDir: string;
  dbPoolMax: number;
  dbConnectTimeoutMs: number;
  dbStatementTimeoutMs: number;
  redisUrl?: string;
  /** Redis command and connect timeouts: past them a request is decided in memory instead. */
  redisCommandTimeoutMs: number;
  redisConnectTimeoutMs: number;
  /** More rejected requests than this in one limited period ban the key (or address). */
  rateLimitBanThreshold: number;
  rateLimitBanSeconds: number;
  /** Prefix of the rate limiter's Redis keys. */
  rateLimitPrefix: string;
  /** Most subjects (keys, addresses) the in-memory rate limiter holds. */
  rateLimitMemoryMaxKeys: number;
  /** Most bytes (estimated) the in-memory rate limiter holds. */
  rateLimitMemoryMaxBytes: number;
  /** Public base URL ending in /v1, used for Link and Location headers. */
  publicBaseUrl: string;
  stagingBaseUrl: string;
  /** Express "trust proxy" value: false, true, a hop count, or a list of addresses/subnets. */
  trustProxy: boolean | number | string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  migrationsDir: string;
  /** Operations (graceful shutdown, server timeouts, readiness, metrics, CORS): see .env.example. */
  shutdownDelayMs: number;
  shutdownTimeoutMs: number;
  keepAliveTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** How often Node checks the headers and request timeouts (its connectionsCheckingInterval). */
  connectionsCheckIntervalMs: number;
  readinessTimeoutMs: number;
  /** How long a readiness outcome is reused by later probes (0: each probe checks, one at a time). */
  readinessCacheMs: number;
  /** Bearer token /metrics requires; undefined: open (keep it off the public network). */
  metricsToken?: string;
  /** Serve /metrics on this port only (a listener of its own), not on PORT. */
  metricsPort?: number;
  /** Origins allowed by CORS; empty: CORS disabled. ['*'] allows any origin. */
  corsOrigins: string[];
  /** Test only (NODE_ENV=test): honour an X-Test-Delay-Ms request header, for shutdown tests. */
  testDelayHeader: boolean;
  /** Secret mixed into stored API key hashes (HMAC-SHA256); undefined: plain SHA-256. */
  apiKeyPepper?: string;
  /**
   * How long an API key lookup (found, unknown or revoked) is cached in process. Bounded
   * below 5 s so a key revoked anywhere is refused by every instance within 5 s (contract).
   */
  apiKeyCacheTtlMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = str(env, name, fallback);
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/**
 * A URL fit for a message or a log: whatever precedes its last `@` after the scheme (the
 * userinfo: user name and password) is replaced, whether or not the rest parses; a password may
 * itself hold characters that break parsing, so the URL parser is not relied on to find it.
 */
export function redactUrl(raw: string): string {
  const at = raw.lastIndexOf('@');
  if (at === -1) return raw;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(raw)?.[0] ?? '';
  return `${scheme}***@${raw.slice(at + 1)}`;
}

function url(env: Env, name: string, protocols: string[], fallback?: string): string | undefined {
  const raw = env[name] === '' ? undefined : (env[name] ?? fallback);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    // The value may hold a password: never repeated as given.
    throw new ConfigError(`${name} must be a URL, got "${redactUrl(raw)}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

function baseUrl(env: Env, name: string, fallback: string): string {
  const raw = url(env, name, ['http:', 'https:'], fallback) as string;
  const trimmed = raw.replace(/\/+$/, '');
  if (!trimmed.endsWith('/v1')) throw new ConfigError(`${name} must end in /v1, got "${redactUrl(raw)}"`);
  if (new URL(trimmed).search || new URL(trimmed).hash) {
    throw new ConfigError(`${name} must not carry a query or fragment, got "${redactUrl(raw)}"`);
  }
  return trimmed;
}

function keyPrefix(env: Env, name: string, fallback: string): string {
  const raw = env[name] ?? fallback;
  // No braces: the rate limiter uses {...} as the Redis Cluster hash tag after the prefix.
  if (!/^[A-Za-z0-9:._-]{0,64}$/.test(raw)) {
    throw new ConfigError(`${name} must be at most 64 letters, digits or : . _ -, got "${raw}"`);
  }
  return raw;
}

function trustProxy(env: Env, nodeEnv: AppConfig['nodeEnv']): boolean | number | string {
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

export function loadConfig(env: Env = process.env): AppConfig {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development');
  return {
    nodeEnv,
    host: str(env, 'HOST', '0.0.0.0'),
    port,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir: str(env, 'DATA_DIR', './data'),
    dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 1000),
    dbConnectTimeoutMs: int(env, 'DB_CONNECT_TIMEOUT_MS', 3000, 100, 600_000),
    dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 10_000, 100, 600_000),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisCommandTimeoutMs: int(env, 'REDIS_COMMAND_TIMEOUT_MS', 500, 10, 60_000),
    redisConnectTimeoutMs: int(env, 'REDIS_CONNECT_TIMEOUT_MS', 2000, 10, 60_000),
    rateLimitBanThreshold: int(env, 'RATE_LIMIT_BAN_THRESHOLD', 20, 0, 1_000_000),
    rateLimitBanSeconds: int(env, 'RATE_LIMIT_BAN_SECONDS', 900, 1, 7 * 86_400),
    rateLimitPrefix: keyPrefix(env, 'RATE_LIMIT_PREFIX', 'animal-store:rl:'),
    rateLimitMemoryMaxKeys: int(env, 'RATE_LIMIT_MEMORY_MAX_KEYS', 100_000, 100, 100_000_000),
    rateLimitMemoryMaxBytes: int(env, 'RATE_LIMIT_MEMORY_MAX_BYTES', 64 * 1024 * 1024, 1024 * 1024, 64 * 1024 * 1024 * 1024),
    publicBaseUrl: baseUrl(env, 'PUBLIC_BASE_URL', `http://localhost:${port}/v1`),
    stagingBaseUrl: baseUrl(env, 'STAGING_BASE_URL', `http://localhost:${port}/v1`),
    trustProxy: trustProxy(env, nodeEnv),
    logLevel: oneOf(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      nodeEnv === 'test' ? 'warn' : 'info',
    ),
    migrationsDir: str(env, 'MIGRATIONS_DIR', 'prisma/migrations'),
    ...operations(env, nodeEnv, port),
    apiKeyPepper: pepper(env),
    apiKeyCacheTtlMs: int(env, 'API_KEY_CACHE_TTL_MS', 2000, 0, 4999),
  };
}

function pepper(env: Env): string | undefined {
  const raw = env.API_KEY_PEPPER;
  if (raw === undefined || raw === '') return undefined;
  // The value itself is never repeated in the message: it is a secret.
  if (raw.length < 32) throw new ConfigError(`API_KEY_PEPPER must be at least 32 characters long, got ${raw.length}`);
  return raw;
}

function operations(env: Env, nodeEnv: AppConfig['nodeEnv'], port: number) {
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
  const metricsToken = env.METRICS_TOKEN === undefined || env.METRICS_TOKEN === '' ? undefined : env.METRICS_TOKEN;
  if (metricsToken !== undefined && metricsToken.length < 16) {
    throw new ConfigError(`METRICS_TOKEN must be at least 16 characters long, got ${metricsToken.length}`);
  }
  const metricsPort = env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? undefined : int(env, 'METRICS_PORT', 0, 1, 65535);
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
    // In production the balancer needs time to see readiness fail before the listener closes.
    shutdownDelayMs: int(env, 'SHUTDOWN_DELAY_MS', nodeEnv === 'production' ? 5000 : 0, 0, 600_000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    // Above the idle timeout of common balancers (AWS ALB 60 s), so they close idle connections first.
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 65_000, 1000, 600_000),
    headersTimeoutMs,
    requestTimeoutMs,
    connectionsCheckIntervalMs: int(env, 'CONNECTIONS_CHECK_INTERVAL_MS', 30_000, 100, 600_000),
    readinessTimeoutMs: int(env, 'READINESS_TIMEOUT_MS', 2000, 100, 60_000),
    readinessCacheMs: int(env, 'READINESS_CACHE_MS', 1000, 0, 60_000),
    metricsToken,
    metricsPort,
    corsOrigins: corsOrigins(env),
    testDelayHeader,
  };
}

function corsOrigins(env: Env): string[] {
  const raw = str(env, 'CORS_ORIGINS', '').trim();
  if (raw === '') return [];
  const origins = raw
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  if (origins.includes('*')) {
    if (origins.length > 1) throw new ConfigError('CORS_ORIGINS is either * or a list of origins, not both');
    return ['*'];
  }
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    // An origin is scheme://host[:port], exactly as browsers send it: no path, no trailing slash.
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS entries must be origins such as https://app.example.com, got "${origin}"`);
    }
  }
  return origins;
}
