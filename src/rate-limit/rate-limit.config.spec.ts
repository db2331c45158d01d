import { ConfigError, loadConfig } from '../config/config.js';

describe('rate-limit configuration', () => {
  it('defaults: ban after 20 refusals for 15 minutes, short Redis timeouts, a namespaced prefix', () => {
    const { rateLimit, redis } = loadConfig({});
    expect(rateLimit.rateLimitBanThreshold).toBe(20);
    expect(rateLimit.rateLimitBanSeconds).toBe(900);
    expect(rateLimit.rateLimitPrefix).toBe('animal-store:rl:');
    expect(rateLimit.rateLimitMemoryMaxKeys).toBe(100_000);
    expect(redis.redisCommandTimeoutMs).toBe(500);
    expect(redis.redisConnectTimeoutMs).toBe(2000);
  });

  it('reads the variables', () => {
    const { rateLimit: c, redis } = loadConfig({
      RATE_LIMIT_BAN_THRESHOLD: '5',
      RATE_LIMIT_BAN_SECONDS: '60',
      RATE_LIMIT_PREFIX: 'staging:rl:',
      RATE_LIMIT_MEMORY_MAX_KEYS: '1000',
      REDIS_COMMAND_TIMEOUT_MS: '100',
      REDIS_CONNECT_TIMEOUT_MS: '250',
    });
    expect([c.rateLimitBanThreshold, c.rateLimitBanSeconds, c.rateLimitPrefix, c.rateLimitMemoryMaxKeys]).toEqual([
      5,
      60,
      'staging:rl:',
      1000,
    ]);
    expect([redis.redisCommandTimeoutMs, redis.redisConnectTimeoutMs]).toEqual([100, 250]);
    expect(loadConfig({ RATE_LIMIT_PREFIX: '' }).rateLimit.rateLimitPrefix).toBe('');
  });

  it.each([
    ['RATE_LIMIT_BAN_THRESHOLD', '-1'],
    ['RATE_LIMIT_BAN_THRESHOLD', 'many'],
    ['RATE_LIMIT_BAN_SECONDS', '0'],
    ['RATE_LIMIT_PREFIX', 'a{b}'],
    ['RATE_LIMIT_PREFIX', 'with space'],
    ['RATE_LIMIT_MEMORY_MAX_KEYS', '10'],
    ['REDIS_COMMAND_TIMEOUT_MS', '0'],
    ['REDIS_CONNECT_TIMEOUT_MS', '1.5'],
  ])('stops on a bad %s (%s) with a message naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} `));
  });
});
