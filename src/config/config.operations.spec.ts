import { ConfigError, loadConfig } from './config.js';

describe('configuration of operations', () => {
  it('defaults: no drain delay outside production, 5 s in production; keep-alive above balancer idle', () => {
    const dev = loadConfig({});
    expect(dev.shutdown).toEqual(expect.objectContaining({ shutdownDelayMs: 0, shutdownTimeoutMs: 10_000 }));
    expect(dev.server).toEqual(
      expect.objectContaining({
        keepAliveTimeoutMs: 65_000,
        headersTimeoutMs: 30_000,
        requestTimeoutMs: 60_000,
        connectionsCheckIntervalMs: 30_000,
        maxConnections: 1000,
        testDelayHeader: false,
      }),
    );
    expect(dev.health).toEqual(expect.objectContaining({ readinessTimeoutMs: 2000 }));
    expect(dev.metrics).toEqual(expect.objectContaining({ metricsToken: undefined }));
    expect(dev.cors).toEqual(expect.objectContaining({ corsOrigins: [] }));
    expect(
      loadConfig({ NODE_ENV: 'production', API_KEY_CHECKSUM_SECRET: 'c'.repeat(32), METRICS_PORT: '9464' }).shutdown
        .shutdownDelayMs,
    ).toBe(5000);
    expect(
      loadConfig({
        NODE_ENV: 'production',
        API_KEY_CHECKSUM_SECRET: 'c'.repeat(32),
        METRICS_PORT: '9464',
        SHUTDOWN_DELAY_MS: '0',
      }).shutdown.shutdownDelayMs,
    ).toBe(0);
    expect(dev.health.readinessCacheMs).toBe(1000);
  });

  it('reads the usage flush interval and retention, and reports every bad one together', () => {
    expect(loadConfig({}).usage).toEqual({ usageFlushMs: 10_000, usageRetentionDays: 400 });
    expect(loadConfig({ USAGE_FLUSH_MS: '250', USAGE_RETENTION_DAYS: '30' }).usage).toEqual({
      usageFlushMs: 250,
      usageRetentionDays: 30,
    });
    let error: unknown;
    try {
      loadConfig({ USAGE_FLUSH_MS: '0', USAGE_RETENTION_DAYS: 'forever' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/USAGE_FLUSH_MS/);
    expect((error as Error).message).toMatch(/USAGE_RETENTION_DAYS/);
  });

  it('reads CORS_ORIGINS as a list of exact origins, or *', () => {
    expect(loadConfig({ CORS_ORIGINS: ' https://a.example.com, http://localhost:5173 ' }).cors.corsOrigins).toEqual([
      'https://a.example.com',
      'http://localhost:5173',
    ]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).cors.corsOrigins).toEqual(['*']);
    for (const bad of ['https://a.example.com/', 'a.example.com', 'ftp://a.example.com', '*,https://a.example.com']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(ConfigError);
    }
  });

  it('refuses a request timeout below the headers timeout, naming both', () => {
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' })).toThrow(
      /REQUEST_TIMEOUT_MS .* HEADERS_TIMEOUT_MS/,
    );
  });

  it('reads MAX_CONNECTIONS as a whole number from 1, naming it when it is not', () => {
    expect(loadConfig({ MAX_CONNECTIONS: '64' }).server.maxConnections).toBe(64);
    for (const bad of ['0', '-1', '1.5', 'many']) {
      expect(() => loadConfig({ MAX_CONNECTIONS: bad })).toThrow(/MAX_CONNECTIONS/);
    }
  });

  it('allows the test delay header only under NODE_ENV=test', () => {
    expect(loadConfig({ NODE_ENV: 'test', ENABLE_TEST_DELAY: 'true' }).server.testDelayHeader).toBe(true);
    expect(() => loadConfig({ NODE_ENV: 'production', ENABLE_TEST_DELAY: 'true' })).toThrow(/ENABLE_TEST_DELAY/);
  });

  it('wants a METRICS_TOKEN of at least 16 characters, without echoing it', () => {
    expect(loadConfig({ METRICS_TOKEN: 'x'.repeat(16) }).metrics.metricsToken).toBe('x'.repeat(16));
    expect(() => loadConfig({ METRICS_TOKEN: 'short-secret' })).toThrow(
      /METRICS_TOKEN must be at least 16 characters long, got 12$/,
    );
  });

  it('serves the admin API only with ADMIN_PORT, on loopback unless ADMIN_HOST opens it, never on PORT', () => {
    const sessions = { adminSessionIdleMinutes: 30, adminSessionMaxHours: 12, adminCookieSecure: false };
    expect(loadConfig({}).admin).toEqual({ adminPort: undefined, adminHost: '127.0.0.1', ...sessions });
    expect(loadConfig({ ADMIN_PORT: '9100' }).admin).toEqual({ adminPort: 9100, adminHost: '127.0.0.1', ...sessions });
    expect(loadConfig({ ADMIN_PORT: '9100', ADMIN_HOST: '10.0.0.5' }).admin.adminHost).toBe('10.0.0.5');
    expect(() => loadConfig({ ADMIN_PORT: '3000', PORT: '3000' })).toThrow(
      /^ADMIN_PORT must differ from PORT \(3000\)/,
    );
    expect(() => loadConfig({ ADMIN_PORT: '65536' })).toThrow(/ADMIN_PORT/);
    expect(() => loadConfig({ ADMIN_PORT: 'nine' })).toThrow(/ADMIN_PORT/);
    expect(() => loadConfig({ ADMIN_HOST: 'http://x' })).toThrow(/^ADMIN_HOST must be an IP address or a host name/);
  });

  it('reads the console’s session lifetimes and cookie setting, refusing values out of range', () => {
    const admin = loadConfig({
      ADMIN_SESSION_IDLE_MINUTES: '5',
      ADMIN_SESSION_MAX_HOURS: '1',
      ADMIN_COOKIE_SECURE: 'true',
    }).admin;
    expect(admin).toMatchObject({ adminSessionIdleMinutes: 5, adminSessionMaxHours: 1, adminCookieSecure: true });
    expect(() => loadConfig({ ADMIN_SESSION_IDLE_MINUTES: '0' })).toThrow(/ADMIN_SESSION_IDLE_MINUTES/);
    expect(() => loadConfig({ ADMIN_SESSION_MAX_HOURS: '721' })).toThrow(/ADMIN_SESSION_MAX_HOURS/);
    expect(() => loadConfig({ ADMIN_COOKIE_SECURE: 'yes' })).toThrow(/ADMIN_COOKIE_SECURE/);
  });

  it('binds the metrics port on loopback unless METRICS_HOST opens it', () => {
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics.metricsHost).toBe('127.0.0.1');
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metrics.metricsHost).toBe('0.0.0.0');
    expect(loadConfig({ METRICS_HOST: '::1' }).metrics.metricsHost).toBe('::1');
    expect(() => loadConfig({ METRICS_HOST: 'http://x' })).toThrow(
      /^METRICS_HOST must be an IP address or a host name/,
    );
  });

  it('wants METRICS_TOKEN or METRICS_PORT in production; METRICS_PORT is a port other than PORT', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', API_KEY_CHECKSUM_SECRET: 'c'.repeat(32) })).toThrow(
      /^METRICS_TOKEN or METRICS_PORT is required with NODE_ENV=production/,
    );
    expect(
      loadConfig({ NODE_ENV: 'production', API_KEY_CHECKSUM_SECRET: 'c'.repeat(32), METRICS_TOKEN: 'x'.repeat(16) })
        .metrics.metricsPort,
    ).toBeUndefined();
    expect(
      loadConfig({ NODE_ENV: 'production', API_KEY_CHECKSUM_SECRET: 'c'.repeat(32), METRICS_PORT: '9464' }).metrics
        .metricsPort,
    ).toBe(9464);
    expect(loadConfig({}).metrics.metricsPort).toBeUndefined();
    expect(() => loadConfig({ METRICS_PORT: '3000' })).toThrow(/^METRICS_PORT must differ from PORT/);
    expect(() => loadConfig({ METRICS_PORT: '0' })).toThrow(/^METRICS_PORT must be between 1 and 65535/);
  });
});
