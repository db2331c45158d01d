import fc from 'fast-check';
import { ConfigError, loadConfig } from './config.js';
import { isPublicPassword } from './placeholder-passwords.js';

describe('public placeholder passwords', () => {
  const PRODUCTION = {
    NODE_ENV: 'production',
    METRICS_TOKEN: 'metrics-token-0123456789',
    API_KEY_CHECKSUM_SECRET: 'c'.repeat(32),
  };
  const cases = [
    [
      'DATABASE_URL',
      'postgresql://animal_app:REPLACE-ME-app-db-password@pgbouncer:6432/db?pgbouncer=true',
      'APP_DB_PASSWORD',
    ],
    ['DATABASE_URL', 'postgresql://animal_app:animal_app@db:5432/db', 'APP_DB_PASSWORD'],
    ['DIRECT_URL', 'postgresql://animal:animal@postgres:5432/db', 'POSTGRES_PASSWORD'],
    ['REDIS_URL', 'redis://:REPLACE-ME-redis-password@redis:6379', 'REDIS_PASSWORD'],
  ] as const;

  it.each(cases)(
    'production refuses %s with the public password %s, naming the compose variable',
    (name, value, compose) => {
      const env = { ...PRODUCTION, [name]: value };
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(
        new RegExp(`${name} holds a public placeholder password.*set ${compose} in .env`),
      );
      expect(() => loadConfig(env)).toThrow(/^(?![^]*REPLACE-ME-(app-db|redis)-password)/);
    },
  );

  it.each(cases)('development accepts %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).not.toThrow();
  });

  it('production accepts a password of its own, and a URL without one', () => {
    expect(() =>
      loadConfig({
        ...PRODUCTION,
        DATABASE_URL: 'postgresql://animal_app:9f2c41d7aa@db:5432/db',
        DIRECT_URL: 'postgresql://animal@db:5432/db',
        REDIS_URL: 'redis://:a8e1b0c5d2@redis:6379',
      }),
    ).not.toThrow();
  });

  it('only the placeholders and the examples are public', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (s) => {
        fc.pre(!s.startsWith('REPLACE-ME') && s !== 'animal' && s !== 'animal_app');
        expect(isPublicPassword(s)).toBe(false);
        expect(isPublicPassword(`REPLACE-ME${s}`)).toBe(true);
      }),
    );
  });
});
