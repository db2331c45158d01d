import { Logger } from '@nestjs/common';
import type { Request } from 'express';
import { CacheClock, stopCacheClock } from '../../test/support/cache-clock.js';
import { ApiError } from '../errors/api-error.js';
import { loadConfig } from '../config/config.js';
import { generateApiKey, hashApiKey } from './api-key-format.js';
import type { ApiKeysService, StoredApiKey } from './api-keys.service.js';
import { AuthService, principalOf } from './auth.service.js';

const KEY = generateApiKey();

function stored(overrides: Partial<StoredApiKey> = {}): StoredApiKey {
  return {
    id: 7n,
    hash: hashApiKey(KEY),
    plan: 'pro',
    perMinute: 300,
    perDay: 10_000,
    lastUsedAt: null,
    revokedAt: null,
    ...overrides,
  };
}

function setup(env: Record<string, string> = {}, row: StoredApiKey | null = stored()) {
  const keys = {
    findByHash: jest.fn(async (hash: string) => (row && row.hash === hash ? row : null)),
    touch: jest.fn(async () => {}),
    onKeyChanged: jest.fn(),
  };
  const config = loadConfig({ API_KEY_CACHE_TTL_MS: '1000', ...env });
  const auth = new AuthService(keys as unknown as ApiKeysService, config.apiKeys, config.database);
  return { keys, auth };
}

const req = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as Request;

async function refusal(auth: AuthService, header?: string): Promise<ApiError> {
  const result = await auth.resolve(req(header));
  if (result.ok) throw new Error('accepted');
  return result.error;
}

describe('AuthService', () => {
  let clock: CacheClock | undefined;
  afterEach(() => {
    clock?.restore();
    clock = undefined;
    jest.useRealTimers();
  });

  it('accepts a valid key with the Bearer scheme in any case and puts the principal on the request', async () => {
    const { auth } = setup();
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const r = req(`${scheme} ${KEY}`);
      expect(await auth.resolve(r)).toEqual({ ok: true, principal: { keyId: '7', plan: 'pro', perMinute: 300, perDay: 10_000 } });
      expect(principalOf(r)).toEqual({ keyId: '7', plan: 'pro', perMinute: 300, perDay: 10_000 });
    }
  });

  it.each([[undefined], [''], ['   ']])('refuses a missing header (%p) with missing_api_key', async (header) => {
    const { auth, keys } = setup();
    const error = await refusal(auth, header);
    expect(error).toMatchObject({ status: 401, code: 'missing_api_key' });
    expect(keys.findByHash).not.toHaveBeenCalled();
  });

  it.each([
    ['another scheme', `Basic ${KEY}`],
    ['a token without scheme', KEY],
    ['the scheme without token', 'Bearer'],
    ['two tokens', `Bearer ${KEY} ${KEY}`],
    ['a malformed key', 'Bearer not-a-key'],
    ['a bad checksum', `Bearer ${KEY.slice(0, -1)}${KEY.endsWith('0') ? '1' : '0'}`],
  ])('refuses %s with invalid_api_key, without a database lookup', async (_what, header) => {
    const { auth, keys } = setup();
    const error = await refusal(auth, header);
    expect(error).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(error.message).not.toContain(KEY.slice(4, 20));
    expect(keys.findByHash).not.toHaveBeenCalled();
  });

  it('refuses an unknown key and a revoked key with invalid_api_key', async () => {
    expect(await refusal(setup().auth, `Bearer ${generateApiKey()}`)).toMatchObject({ code: 'invalid_api_key' });
    const revoked = setup({}, stored({ revokedAt: new Date() }));
    expect(await refusal(revoked.auth, `Bearer ${KEY}`)).toMatchObject({ code: 'invalid_api_key' });
  });

  it('resolves once per request, however often it is asked', async () => {
    const { auth, keys } = setup({ API_KEY_CACHE_TTL_MS: '0' });
    const r = req(`Bearer ${KEY}`);
    const [a, b] = await Promise.all([auth.resolve(r), auth.resolve(r)]);
    expect(await auth.resolve(r)).toBe(a);
    expect(b).toBe(a);
    expect(keys.findByHash).toHaveBeenCalledTimes(1);
  });

  it('serves a hot key from the cache, one lookup for concurrent requests, until the TTL passes', async () => {
    // The cache's own clock, stopped: the entry expires when the test moves it, not with time.
    jest.useFakeTimers();
    const cache = (clock = stopCacheClock());
    const { auth, keys } = setup({ API_KEY_CACHE_TTL_MS: '150' });
    const results = await Promise.all(Array.from({ length: 20 }, async () => auth.resolve(req(`Bearer ${KEY}`))));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(keys.findByHash).toHaveBeenCalledTimes(1);
    cache.advance(149);
    jest.advanceTimersByTime(149);
    await auth.resolve(req(`Bearer ${KEY}`));
    expect(keys.findByHash).toHaveBeenCalledTimes(1);
    cache.advance(2);
    jest.advanceTimersByTime(2);
    await auth.resolve(req(`Bearer ${KEY}`));
    expect(keys.findByHash).toHaveBeenCalledTimes(2);
  });

  it('caches unknown keys too', async () => {
    const { auth, keys } = setup();
    const unknown = generateApiKey();
    for (let i = 0; i < 5; i++) await refusal(auth, `Bearer ${unknown}`);
    expect(keys.findByHash).toHaveBeenCalledTimes(1);
  });

  it('forgets a key changed in this process at once', async () => {
    const { auth, keys } = setup();
    await auth.resolve(req(`Bearer ${KEY}`));
    const forget = keys.onKeyChanged.mock.calls[0][0] as (hash: string) => void;
    forget(hashApiKey(KEY));
    await auth.resolve(req(`Bearer ${KEY}`));
    expect(keys.findByHash).toHaveBeenCalledTimes(2);
  });

  it('uses the pepper: a key hashed without it is not found', async () => {
    const { auth } = setup({ API_KEY_PEPPER: 'x'.repeat(32) });
    expect(await refusal(auth, `Bearer ${KEY}`)).toMatchObject({ code: 'invalid_api_key' });
    const peppered = setup({ API_KEY_PEPPER: 'x'.repeat(32) }, stored({ hash: hashApiKey(KEY, 'x'.repeat(32)) }));
    expect((await peppered.auth.resolve(req(`Bearer ${KEY}`))).ok).toBe(true);
  });

  it('lets a database failure reject (the filter answers 503), and caches nothing then', async () => {
    const { auth, keys } = setup();
    keys.findByHash.mockRejectedValueOnce(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    await expect(auth.resolve(req(`Bearer ${KEY}`))).rejects.toThrow('ECONNREFUSED');
    expect((await auth.resolve(req(`Bearer ${KEY}`))).ok).toBe(true);
  });

  it('records use at most once a minute per key, without failing the request when that fails', async () => {
    jest.useFakeTimers({ now: 10_000_000 });
    const { auth, keys } = setup({ API_KEY_CACHE_TTL_MS: '0' });
    keys.touch.mockRejectedValueOnce(new Error('disk full'));
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => {});
    expect((await auth.resolve(req(`Bearer ${KEY}`))).ok).toBe(true);
    await auth.resolve(req(`Bearer ${KEY}`));
    expect(keys.touch).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(60_000);
    await auth.resolve(req(`Bearer ${KEY}`));
    expect(keys.touch).toHaveBeenCalledTimes(2);
    await auth.beforeApplicationShutdown();
    expect(warn).toHaveBeenCalledWith('could not record use of API key 7: disk full');
    warn.mockRestore();
  });

  it('does not record use again soon after another instance did', async () => {
    const { auth, keys } = setup({}, stored({ lastUsedAt: new Date(Date.now() - 10_000) }));
    await auth.resolve(req(`Bearer ${KEY}`));
    expect(keys.touch).not.toHaveBeenCalled();
  });

  it('prechecks without the database: settled results, then unknown until a key is found, then known', async () => {
    jest.useFakeTimers();
    const cache = (clock = stopCacheClock());
    const { auth, keys } = setup({ API_KEY_CACHE_TTL_MS: '50' });
    expect(auth.precheck(req())).toMatchObject({ ok: false, error: { code: 'missing_api_key' } });
    expect(auth.precheck(req('Bearer not-a-key'))).toMatchObject({ ok: false, error: { code: 'invalid_api_key' } });
    expect(auth.precheck(req(`Bearer ${KEY}`))).toBe('unknown');
    expect(keys.findByHash).not.toHaveBeenCalled();
    await auth.resolve(req(`Bearer ${KEY}`));
    // Cached: the result itself, memoised for resolve().
    const hot = req(`Bearer ${KEY}`);
    expect(auth.precheck(hot)).toEqual({ ok: true, principal: expect.objectContaining({ keyId: '7' }) });
    expect(principalOf(hot)?.keyId).toBe('7');
    expect((await auth.resolve(hot)).ok).toBe(true);
    expect(keys.findByHash).toHaveBeenCalledTimes(1);
    // Past the cache TTL it is still no guess.
    cache.advance(51);
    jest.advanceTimersByTime(51);
    expect(auth.precheck(req(`Bearer ${KEY}`))).toBe('known');
    const other = generateApiKey();
    await auth.resolve(req(`Bearer ${other}`));
    expect(auth.precheck(req(`Bearer ${other}`))).toMatchObject({ ok: false, error: { code: 'invalid_api_key' } });
  });

  it('looks up unknown keys on at most half the pool at once, and refuses beyond a bounded queue with 503', async () => {
    const { auth, keys } = setup({ DB_POOL_MAX: '4', API_KEY_CACHE_TTL_MS: '0' });
    let running = 0;
    let most = 0;
    const release: (() => void)[] = [];
    keys.findByHash.mockImplementation(async () => {
      running += 1;
      most = Math.max(most, running);
      await new Promise<void>((r) => release.push(r));
      running -= 1;
      return null;
    });
    const pending = Array.from({ length: 102 }, () => Promise.resolve(auth.resolve(req(`Bearer ${generateApiKey()}`))).then((r) => r, (e: unknown) => e));
    const extra = await Promise.resolve(auth.resolve(req(`Bearer ${generateApiKey()}`))).catch((e: unknown) => e);
    expect(extra).toMatchObject({ status: 503, code: 'service_unavailable', headers: { 'Retry-After': '1' } });
    while (release.length > 0 || running > 0) {
      release.splice(0).forEach((r) => r());
      await new Promise((r) => setImmediate(r));
    }
    const results = await Promise.all(pending);
    expect(results.every((r) => (r as { ok?: boolean }).ok === false)).toBe(true);
    expect(most).toBe(2);
    expect(keys.findByHash).toHaveBeenCalledTimes(102);
  });
});
