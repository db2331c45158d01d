import fc from 'fast-check';
import { ConfigError, loadConfig, redactUrl } from './config.js';
import { driverUrl } from './database.config.js';

describe('loadConfig', () => {
  it('gives working defaults for an empty environment: embedded database on port 3000', () => {
    const c = loadConfig({});
    expect(c.server.port).toBe(3000);
    expect(c.database.databaseUrl).toBeUndefined();
    expect(c.database.dataDir).toBe('./data');
    expect(c.publicUrls.publicBaseUrl).toBe('http://localhost:3000/v1');
    expect(c.server.trustProxy).toBe(false);
  });

  it('reads and normalises values', () => {
    const c = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgresql://u@db:5432/x',
      PUBLIC_BASE_URL: 'https://api.example.com/v1/',
      TRUST_PROXY: '2',
    });
    expect(c.server.port).toBe(8080);
    expect(c.database.databaseUrl).toBe('postgresql://u@db:5432/x');
    expect(c.publicUrls.publicBaseUrl).toBe('https://api.example.com/v1');
    expect(c.server.trustProxy).toBe(2);
  });

  it.each<[string, string, Record<string, string>?]>([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://x'],
    ['PUBLIC_BASE_URL', 'https://api.example.com'],
    ['STAGING_BASE_URL', 'ftp://x/v1'],
    ['LOG_LEVEL', 'loud'],
    ['NODE_ENV', 'prod'],
    ['DB_POOL_MAX', '0'],
    ['DATABASE_URL', 'postgresql://u@bouncer:6432/x?pgbouncer=yes'],
    ['DIRECT_URL', 'http://db/x'],
    ['REDIS_CLUSTER_NODES', 'redis-1:7000,redis-2'],
    ['REDIS_SENTINELS', 'sentinel-1', { REDIS_SENTINEL_NAME: 'main' }],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'grpc://collector:4317'],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
    ['OTEL_TRACES_SAMPLER', 'sometimes'],
    ['OTEL_TRACES_SAMPLER_ARG', '1.5'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'novalue'],
    ['TRUST_PROXY', 'yes please!'],
  ])('stops on a bad %s (%s) with a message naming it', (name, value, others = {}) => {
    expect(() => loadConfig({ ...others, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...others, [name]: value })).toThrow(new RegExp(`^${name} `));
  });

  it('reads a pooler in front of PostgreSQL from pgbouncer=true, and hides the flag from the driver', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgresql://u:p@bouncer:6432/x?sslmode=disable&pgbouncer=true',
      DIRECT_URL: 'postgresql://u:p@db:5432/x',
    });
    expect(c.database).toMatchObject({ dbPooler: true, directUrl: 'postgresql://u:p@db:5432/x' });
    expect(driverUrl(c.database.databaseUrl as string)).toBe('postgresql://u:p@bouncer:6432/x?sslmode=disable');
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@db/x?pgbouncer=false' }).database.dbPooler).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@db/x' }).database.dbPooler).toBe(false);
  });

  it('reads the Redis topology: one server, a cluster, or a master watched by sentinels, never two of them', () => {
    expect(loadConfig({ REDIS_URL: 'redis://:pw@r:6379' }).redis.redisTarget).toEqual({
      kind: 'single',
      url: 'redis://:pw@r:6379',
    });
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'r1:7000, [::1]:7001', REDIS_PASSWORD: 'pw' }).redis.redisTarget).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'r1', port: 7000 },
        { host: '::1', port: 7001 },
      ],
      password: 'pw',
    });
    expect(
      loadConfig({ REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_NAME: 'main', REDIS_SENTINEL_PASSWORD: 'sp' })
        .redis.redisTarget,
    ).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      name: 'main',
      sentinelPassword: 'sp',
    });
    expect(loadConfig({}).redis.redisTarget).toBeUndefined();
    expect(() => loadConfig({ REDIS_URL: 'redis://r', REDIS_CLUSTER_NODES: 'r1:7000' })).toThrow(
      /^REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS are exclusive/,
    );
  });

  it('reads OpenTelemetry from the standard OTEL_* variables: off without an endpoint', () => {
    expect(loadConfig({}).tracing).toMatchObject({
      otlpTracesEndpoint: undefined,
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-team=pets',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=staging',
      }).tracing,
    ).toMatchObject({
      otlpTracesEndpoint: 'http://collector:4318/v1/traces',
      otlpHeaders: { authorization: 'Bearer abc', 'x-team': 'pets' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.01,
      resourceAttributes: { 'deployment.environment': 'staging' },
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/traces' }).tracing.otlpTracesEndpoint).toBe(
      'http://c:4318/traces',
    );
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing
        .otlpTracesEndpoint,
    ).toBeUndefined();
  });

  it('refuses TRUST_PROXY=true in production, asking for the hops or subnets', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).server.trustProxy).toBe(true);
    expect(() =>
      loadConfig({
        NODE_ENV: 'production',
        TRUST_PROXY: 'true',
        METRICS_TOKEN: 'x'.repeat(16),
        API_KEY_CHECKSUM_SECRET: 'c'.repeat(32),
      }),
    ).toThrow(/^TRUST_PROXY=true .*number of proxies.*subnets/);
    expect(
      loadConfig({
        NODE_ENV: 'production',
        API_KEY_CHECKSUM_SECRET: 'c'.repeat(32),
        TRUST_PROXY: '1',
        METRICS_TOKEN: 'x'.repeat(16),
      }).server.trustProxy,
    ).toBe(1);
  });

  it.each([
    ['DATABASE_URL', 'postgresql://animal:pa55word@127.0.0.1:notaport/x'],
    ['DATABASE_URL', 'postgresql://animal:pa55@word@db host/x'],
    ['REDIS_URL', 'redis://:pa55word@[::1'],
    ['PUBLIC_BASE_URL', 'https://u:pa55word@api.example.com/v2'],
  ])('never repeats the password of a bad %s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      expect((err as Error).message).not.toMatch(/pa55|animal|word/);
      expect((err as Error).message).toMatch(/\*\*\*@/);
    }
  });

  it('redacts the userinfo of any text shaped like a URL (property)', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string({ minLength: 1 }).filter((p) => !p.includes('@')),
        fc.string(),
        (user, password, rest) => {
          const secret = `S${password}`;
          const redacted = redactUrl(`postgresql://${user}:${secret}@${rest.replaceAll('@', '')}`);
          expect(redacted.startsWith('postgresql://***@')).toBe(true);
          expect(redacted.slice('postgresql://***@'.length)).toBe(rest.replaceAll('@', ''));
        },
      ),
    );
  });
});
