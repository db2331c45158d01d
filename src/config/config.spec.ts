import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('gives working defaults for an empty environment: embedded database on port 3000', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toBe('./data');
    expect(c.publicBaseUrl).toBe('http://localhost:3000/v1');
    expect(c.trustProxy).toBe(false);
  });

  it('reads and normalises values', () => {
    const c = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgresql://u@db:5432/x',
      PUBLIC_BASE_URL: 'https://api.example.com/v1/',
      TRUST_PROXY: '2',
    });
    expect(c.port).toBe(8080);
    expect(c.databaseUrl).toBe('postgresql://u@db:5432/x');
    expect(c.publicBaseUrl).toBe('https://api.example.com/v1');
    expect(c.trustProxy).toBe(2);
  });

  it.each([
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
    ['TRUST_PROXY', 'yes please!'],
  ])('stops on a bad %s (%s) with a message naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} `));
  });
});
