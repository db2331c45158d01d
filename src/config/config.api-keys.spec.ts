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
});
