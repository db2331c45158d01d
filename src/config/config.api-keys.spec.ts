import { ConfigError, loadConfig } from './config.js';

describe('API key configuration', () => {
  it('defaults to plain SHA-256 and a 2 s cache', () => {
    const c = loadConfig({}).apiKeys;
    expect(c.apiKeyPepper).toBeUndefined();
    expect(c.apiKeyCacheTtlMs).toBe(2000);
  });

  it('reads a pepper and a cache TTL below 5 s', () => {
    const c = loadConfig({ API_KEY_PEPPER: 's'.repeat(40), API_KEY_CACHE_TTL_MS: '4999' }).apiKeys;
    expect(c.apiKeyPepper).toBe('s'.repeat(40));
    expect(c.apiKeyCacheTtlMs).toBe(4999);
    expect(loadConfig({ API_KEY_CACHE_TTL_MS: '0' }).apiKeys.apiKeyCacheTtlMs).toBe(0);
  });

  it.each([
    ['API_KEY_CACHE_TTL_MS', '5000'],
    ['API_KEY_CACHE_TTL_MS', '-1'],
    ['API_KEY_CACHE_TTL_MS', '2s'],
    ['API_KEY_PEPPER', 'short-secret'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('never repeats the pepper in its message', () => {
    expect(() => loadConfig({ API_KEY_PEPPER: 'hunter2-secret' })).toThrow(/^(?!.*hunter2)/);
  });

  const PRODUCTION = { NODE_ENV: 'production', METRICS_TOKEN: 'metrics-token-0123456789' };

  it('reads the checksum secret and the lookup budgets; production requires the secret', () => {
    const c = loadConfig({ API_KEY_CHECKSUM_SECRET: 'c'.repeat(32) }).apiKeys;
    expect(c).toMatchObject({
      apiKeyChecksumSecret: 'c'.repeat(32),
      apiKeyFailedLookupsPerAddress: 10,
      apiKeyUnknownLookupsPerSecond: 50,
    });
    expect(loadConfig({}).apiKeys.apiKeyChecksumSecret).toBeUndefined();
    expect(() => loadConfig(PRODUCTION)).toThrow(
      /API_KEY_CHECKSUM_SECRET is required with NODE_ENV=production.*openssl rand -base64 48/,
    );
    expect(loadConfig({ ...PRODUCTION, API_KEY_CHECKSUM_SECRET: 'c'.repeat(32) }).apiKeys.apiKeyChecksumSecret).toBe(
      'c'.repeat(32),
    );
  });

  it.each(['API_KEY_PEPPER', 'API_KEY_CHECKSUM_SECRET'])(
    "refuses docker-compose.yml's placeholder %s in production only",
    (name) => {
      const placeholder = { [name]: 'REPLACE-ME-placeholder-of-compose-0000000000' };
      const secret = { API_KEY_CHECKSUM_SECRET: 'c'.repeat(32) };
      expect(() => loadConfig({ ...PRODUCTION, ...secret, ...placeholder })).toThrow(
        new RegExp(`${name} is the placeholder of docker-compose.yml.*openssl rand`),
      );
      expect(() => loadConfig({ ...secret, ...placeholder })).not.toThrow();
    },
  );

  it.each([
    ['API_KEY_CHECKSUM_SECRET', 'too-short'],
    ['API_KEY_FAILED_LOOKUPS_PER_ADDRESS', '0'],
    ['API_KEY_UNKNOWN_LOOKUPS_PER_SECOND', 'many'],
  ])('refuses %s=%s, naming the variable and never the secret', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
    if (name === 'API_KEY_CHECKSUM_SECRET') expect(() => loadConfig({ [name]: value })).toThrow(/^(?!.*too-short)/);
  });
});
