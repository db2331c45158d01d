import { Test } from '@nestjs/testing';
import { CONFIG_SLICES, ConfigError, loadConfig } from './config.js';
import { ConfigModule } from './config.module.js';
import { defineConfig, loadSlice, loadSlices, type ConfigSlice } from './define-config.js';
import { metricsConfig } from './metrics.config.js';
import { rateLimitConfig } from './rate-limit.config.js';
import { runtimeConfig } from './runtime.config.js';

describe('configuration slices', () => {
  it('loads a slice used by others once, and hands every user the same value', () => {
    let loads = 0;
    const base = defineConfig('base', (env) => {
      loads += 1;
      return { name: env.raw('NAME') ?? 'default' };
    });
    const a = defineConfig('a', (_env, use) => ({ base: use(base) }));
    const b = defineConfig('b', (_env, use) => ({ base: use(base) }));
    const loaded = loadSlices({ a, b, base }, { NAME: 'x' });
    expect(loads).toBe(1);
    expect(loaded.a.base).toBe(loaded.base);
    expect(loaded.b.base).toBe(loaded.base);
    expect(loaded.base).toEqual({ name: 'x' });
  });

  it('refuses slices that use each other in a cycle, as a programming error rather than configuration', () => {
    const a: ConfigSlice<number> = defineConfig('a', (_env, use) => use(b) + 1);
    const b: ConfigSlice<number> = defineConfig('b', (_env, use) => use(a) + 1);
    expect(() => loadSlice(a, {})).toThrow(/configuration slice "a" uses itself/);
    expect(() => loadSlice(a, {})).not.toThrow(ConfigError);
  });

  it('keeps a rule spanning slices when one slice is loaded alone', () => {
    expect(() => loadSlice(metricsConfig, { NODE_ENV: 'production' })).toThrow(
      /^METRICS_TOKEN or METRICS_PORT is required with NODE_ENV=production/,
    );
    expect(() => loadSlice(metricsConfig, { PORT: '8080', METRICS_PORT: '8080' })).toThrow(
      /^METRICS_PORT must differ from PORT \(8080\)/,
    );
    expect(loadSlice(metricsConfig, { NODE_ENV: 'production', METRICS_PORT: '9464' })).toEqual({
      metricsHost: '127.0.0.1',
      metricsToken: undefined,
      metricsPort: 9464,
    });
  });

  it('holds each slice under its own name, with a token of its own', () => {
    for (const [key, slice] of Object.entries(CONFIG_SLICES)) expect(slice.name).toBe(key);
    const tokens = Object.values(CONFIG_SLICES).map((s) => s.token);
    expect(new Set(tokens).size).toBe(tokens.length);
  });
});

describe('ConfigModule', () => {
  it('provides each slice, and only that slice, under its token', async () => {
    const config = loadConfig({ NODE_ENV: 'test', RATE_LIMIT_PREFIX: 'spec:rl:' });
    const moduleRef = await Test.createTestingModule({ imports: [ConfigModule.forRoot(config)] }).compile();
    for (const [key, slice] of Object.entries(CONFIG_SLICES)) {
      expect(moduleRef.get(slice.token)).toBe(config[key as keyof typeof config]);
    }
    expect(moduleRef.get(rateLimitConfig.token)).toEqual({
      rateLimitBanThreshold: 20,
      rateLimitBanSeconds: 900,
      rateLimitPrefix: 'spec:rl:',
      rateLimitMemoryMaxKeys: 100_000,
      rateLimitMemoryMaxBytes: 64 * 1024 * 1024,
    });
    expect(moduleRef.get(runtimeConfig.token)).toEqual({ nodeEnv: 'test' });
    await moduleRef.close();
  });
});
