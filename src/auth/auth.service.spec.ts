import { Logger } from '@nestjs/common';
import { CacheClock, stopCacheClock } from '../../test/support/cache-clock.js';
import { ApiError } from '../errors/api-error.js';
import { loadConfig } from '../config/config.js';
import { generateApiKey, hashApiKey } from '../api-keys/api-key-format.js';
import type { ApiKeysService, StoredApiKey } from '../api-keys/api-keys.service.js';
import { FakeClock } from '../../test/support/app.js';
import { storedApiKey } from '../../test/factories/stored-api-key.factory.js';
import { AuthMetrics, MetricsService } from '../metrics/metrics.service.js';
import { AuthService } from './auth.service.js';

const KEY = generateApiKey();

function stored(overrides: Partial<StoredApiKey> = {}): StoredApiKey {
  return storedApiKey({ hash: hashApiKey(KEY), ...overrides });
}

function setup(env: Record<string, string> = {}, row: StoredApiKey | null = stored()) {
  const keys = {
    findByHash: jest.fn(async (hash: string) => (row && row.hash === hash ? row : null)),
    touch: jest.fn(async () => {}),
    onKeyChanged: jest.fn(),
    changesSince: jest.fn(
      async (_since: Date | null): Promise<{ now: Date; changes: { hashes: string[]; changedAt: Date }[] }> => ({
        now: new Date(),
        changes: [],
      }),
    ),
  };
  const config = loadConfig({ API_KEY_CACHE_TTL_MS: '1000', ...env });
  const clock = new FakeClock(new Date('2026-11-22T12:00:05Z'));
  const metrics = new MetricsService();
  const auth = new AuthService(
    keys as unknown as ApiKeysService,
    clock,
    config.apiKeys,
    config.database,
    new AuthMetrics(metrics),
  );
  return { keys, auth, clock, metrics };
}

const ADDRESS = '203.0.113.7';

async function refusal(
  auth: AuthService,
  header?: string,
  address: string | (() => string) = ADDRESS,
): Promise<ApiError> {
  const result = await auth.verify(header, address);
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

  it('accepts a valid key with the Bearer scheme in any case', async () => {
    const { auth } = setup();
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      expect(await auth.verify(`${scheme} ${KEY}`, ADDRESS)).toEqual({
        ok: true,
        principal: { keyId: '7', plan: 'pro', perMinute: 300, perDay: 10_000, scopes: ['pets:read', 'pets:write'] },
      });
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

  it('serves a hot key from the cache, one lookup for concurrent requests, until the TTL passes', async () => {
    // The cache's own clock, stopped: the entry expires when the test moves it, not with time.
    jest.useFakeTimers();
    const cache = (clock = stopCacheClock());
    const { auth, keys } = setup({ API_KEY_CACHE_TTL_MS: '150' });
    const results = await Promise.all(Array.from({ length: 20 }, async () => auth.verify(`Bearer ${KEY}`, ADDRESS)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(keys.findByHash).toHaveBeenCalledTimes(1);
    cache.advance(149);
    jest.advanceTimersByTime(149);
    await auth.verify(`Bearer ${KEY}`, ADDRESS);
    expect(keys.findByHash).toHaveBeenCalledTimes(1);
    cache.advance(2);
    jest.advanceTimersByTime(2);
    await auth.verify(`Bearer ${KEY}`, ADDRESS);
    expect(keys.findByHash).toHaveBeenCalledTimes(2);
  });

  it('answers at once, without a promise, when no lookup is needed: a cached key, a malformed key', async () => {
    const { auth } = setup();
    expect(auth.verify(`Bearer ${KEY}`, ADDRESS)).toBeInstanceOf(Promise);
    await auth.verify(`Bearer ${KEY}`, ADDRESS);
    expect(auth.verify(`Bearer ${KEY}`, ADDRESS)).toMatchObject({ ok: true, principal: { plan: 'pro' } });
    expect(auth.verify('Bearer nope', ADDRESS)).toMatchObject({ ok: false, error: { code: 'invalid_api_key' } });
  });

  describe('at start', () => {
    it('caches the keys used in the last hour before taking traffic; a failing query leaves each to its lookup', async () => {
      const { auth, keys } = setup();
      const recentlyUsed = jest.fn(async (_withinMs: number, _limit: number) => [stored()]);
      Object.assign(keys, { recentlyUsed });
      await auth.onApplicationBootstrap();
      expect(recentlyUsed).toHaveBeenCalledWith(60 * 60_000, 10_000);
      // The first poll ran before the query: the next one reports what changed after it.
      expect(keys.changesSince).toHaveBeenCalledTimes(1);
      expect(auth.verify(`Bearer ${KEY}`, ADDRESS)).toMatchObject({ ok: true, principal: { keyId: '7' } });
      expect(keys.findByHash).not.toHaveBeenCalled();
      await auth.beforeApplicationShutdown();

      const failing = setup();
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => {});
      Object.assign(failing.keys, { recentlyUsed: jest.fn().mockRejectedValue(new Error('connect ECONNREFUSED')) });
      await failing.auth.onApplicationBootstrap();
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('could not cache the API keys used in the last hour'));
      warn.mockRestore();
      expect((await failing.auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
      expect(failing.keys.findByHash).toHaveBeenCalledTimes(1);
      await failing.auth.beforeApplicationShutdown();
    });

    it('caches nothing at start when the cache is off', async () => {
      const { auth, keys } = setup({ API_KEY_CACHE_TTL_MS: '0' });
      const recentlyUsed = jest.fn(async () => [stored()]);
      Object.assign(keys, { recentlyUsed });
      await auth.onApplicationBootstrap();
      expect(recentlyUsed).not.toHaveBeenCalled();
      await auth.verify(`Bearer ${KEY}`, ADDRESS);
      expect(keys.findByHash).toHaveBeenCalledTimes(1);
    });
  });

  describe('polling changed keys', () => {
    it('keeps a key cached past the TTL while polls succeed, and drops it when a poll reports it changed', async () => {
      const cache = (clock = stopCacheClock());
      const { auth, keys } = setup({ API_KEY_CACHE_TTL_MS: '150' });
      await auth.pollChanges(); // the first poll learns the database's clock only
      expect(keys.changesSince).toHaveBeenLastCalledWith(null);
      expect((await auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
      for (let i = 0; i < 5; i++) {
        cache.advance(100);
        await auth.pollChanges();
        expect((await auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
      }
      expect(keys.findByHash).toHaveBeenCalledTimes(1);
      // Asks for changes after the previous poll's database instant, less the overlap.
      expect(keys.changesSince.mock.lastCall?.[0]).toBeInstanceOf(Date);

      const changedAt = new Date();
      keys.changesSince.mockResolvedValue({ now: new Date(), changes: [{ hashes: [hashApiKey(KEY)], changedAt }] });
      await auth.pollChanges();
      await auth.verify(`Bearer ${KEY}`, ADDRESS);
      expect(keys.findByHash).toHaveBeenCalledTimes(2);
      // The overlap of the next poll sees the same change again: it is not applied twice.
      await auth.pollChanges();
      await auth.verify(`Bearer ${KEY}`, ADDRESS);
      expect(keys.findByHash).toHaveBeenCalledTimes(2);
    });

    it('runs one poll at a time: a poll asked for while one runs confirms the cache as of when it was asked', async () => {
      const cache = (clock = stopCacheClock());
      const { auth, keys } = setup({ API_KEY_CACHE_TTL_MS: '150' });
      await auth.pollChanges();
      await auth.verify(`Bearer ${KEY}`, ADDRESS);
      // The timer's poll is slow to answer; meanwhile time passes and another poll is asked for.
      let answer!: () => void;
      keys.changesSince.mockImplementationOnce(
        () => new Promise((resolve) => (answer = () => resolve({ now: new Date(), changes: [] }))),
      );
      const slow = auth.pollChanges();
      cache.advance(151);
      const asked = auth.pollChanges();
      answer();
      await Promise.all([slow, asked]);
      expect(keys.changesSince).toHaveBeenCalledTimes(3);
      // The later poll's confirmation stands: the key is still fresh, no second lookup.
      expect((await auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
      expect(keys.findByHash).toHaveBeenCalledTimes(1);
    });

    it('lets the cache run out within the TTL while polls fail', async () => {
      const cache = (clock = stopCacheClock());
      const { auth, keys } = setup({ API_KEY_CACHE_TTL_MS: '150' });
      await auth.pollChanges();
      await auth.verify(`Bearer ${KEY}`, ADDRESS);
      cache.advance(100);
      await auth.pollChanges();
      keys.changesSince.mockRejectedValue(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      cache.advance(100);
      await auth.pollChanges();
      await auth.verify(`Bearer ${KEY}`, ADDRESS);
      expect(keys.findByHash).toHaveBeenCalledTimes(1); // 100 ms after the last successful poll
      cache.advance(51);
      await auth.verify(`Bearer ${KEY}`, ADDRESS);
      expect(keys.findByHash).toHaveBeenCalledTimes(2);
    });
  });

  it('caches unknown keys too', async () => {
    const { auth, keys } = setup();
    const unknown = generateApiKey();
    for (let i = 0; i < 5; i++) await refusal(auth, `Bearer ${unknown}`);
    expect(keys.findByHash).toHaveBeenCalledTimes(1);
  });

  it('forgets a key changed in this process at once', async () => {
    const { auth, keys } = setup();
    await auth.verify(`Bearer ${KEY}`, ADDRESS);
    const forget = keys.onKeyChanged.mock.calls[0][0] as (hash: string) => void;
    forget(hashApiKey(KEY));
    await auth.verify(`Bearer ${KEY}`, ADDRESS);
    expect(keys.findByHash).toHaveBeenCalledTimes(2);
  });

  it('uses the pepper: a key hashed without it is not found', async () => {
    const { auth } = setup({ API_KEY_PEPPER: 'x'.repeat(32) });
    expect(await refusal(auth, `Bearer ${KEY}`)).toMatchObject({ code: 'invalid_api_key' });
    const peppered = setup({ API_KEY_PEPPER: 'x'.repeat(32) }, stored({ hash: hashApiKey(KEY, 'x'.repeat(32)) }));
    expect((await peppered.auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
  });

  it('lets a database failure reject (the filter answers 503), and caches nothing then', async () => {
    const { auth, keys } = setup();
    keys.findByHash.mockRejectedValueOnce(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    await expect(auth.verify(`Bearer ${KEY}`, ADDRESS)).rejects.toThrow('ECONNREFUSED');
    expect((await auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
  });

  it('records use at most once a minute per key, without failing the request when that fails', async () => {
    const { auth, keys, clock } = setup({ API_KEY_CACHE_TTL_MS: '0' });
    keys.touch.mockRejectedValueOnce(new Error('disk full'));
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => {});
    expect((await auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
    await auth.verify(`Bearer ${KEY}`, ADDRESS);
    expect(keys.touch).toHaveBeenCalledTimes(1);
    clock.set(new Date(clock.now().getTime() + 60_000));
    await auth.verify(`Bearer ${KEY}`, ADDRESS);
    expect(keys.touch).toHaveBeenCalledTimes(2);
    await auth.beforeApplicationShutdown();
    expect(warn).toHaveBeenCalledWith('could not record use of API key 7: disk full');
    warn.mockRestore();
  });

  it('does not record use again soon after another instance did', async () => {
    const { auth, keys } = setup({}, stored({ lastUsedAt: new Date(Date.parse('2026-11-22T12:00:05Z') - 10_000) }));
    await auth.verify(`Bearer ${KEY}`, ADDRESS);
    expect(keys.touch).not.toHaveBeenCalled();
  });

  it('looks up unknown keys on at most half the pool at once, and refuses beyond a bounded queue with 503', async () => {
    const { auth, keys } = setup({
      DB_POOL_MAX: '4',
      API_KEY_CACHE_TTL_MS: '0',
      API_KEY_FAILED_LOOKUPS_PER_ADDRESS: '1000',
      API_KEY_UNKNOWN_LOOKUPS_PER_SECOND: '1000',
    });
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
    const pending = Array.from({ length: 102 }, () =>
      Promise.resolve(auth.verify(`Bearer ${generateApiKey()}`, ADDRESS)).then(
        (r) => r,
        (e: unknown) => e,
      ),
    );
    const extra = await Promise.resolve(auth.verify(`Bearer ${generateApiKey()}`, ADDRESS)).catch((e: unknown) => e);
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

  it('refuses a version 2 key with a forged tag without a lookup, and looks up a signed one', async () => {
    const secret = 'c'.repeat(32);
    const signed = generateApiKey(secret);
    const { auth, keys, metrics } = setup({ API_KEY_CHECKSUM_SECRET: secret }, stored({ hash: hashApiKey(signed) }));
    for (let i = 0; i < 50; i++) {
      expect(await refusal(auth, `Bearer ${generateApiKey('f'.repeat(32))}`)).toMatchObject({
        status: 401,
        code: 'invalid_api_key',
      });
    }
    expect(keys.findByHash).not.toHaveBeenCalled();
    expect(await metrics.render()).toContain('api_key_refusals_total{reason="malformed"} 50');
    expect((await auth.verify(`Bearer ${signed}`, ADDRESS)).ok).toBe(true);
    expect(keys.findByHash).toHaveBeenCalledTimes(1);
  });

  it('refuses version 2 keys outright when no checksum secret is configured', async () => {
    const { auth, keys } = setup();
    expect(await refusal(auth, `Bearer ${generateApiKey('c'.repeat(32))}`)).toMatchObject({ code: 'invalid_api_key' });
    expect(keys.findByHash).not.toHaveBeenCalled();
  });

  it('gives an address a budget of failed version 1 lookups per minute, but never refuses a key it found before', async () => {
    const { auth, keys, clock } = setup({ API_KEY_FAILED_LOOKUPS_PER_ADDRESS: '3' });
    expect((await auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true); // found: known from now on
    keys.findByHash.mockClear();
    const codes = [];
    for (let i = 0; i < 6; i++) codes.push((await refusal(auth, `Bearer ${generateApiKey()}`)).code);
    expect(codes).toEqual([
      'invalid_api_key',
      'invalid_api_key',
      'invalid_api_key',
      'rate_limit_exceeded',
      'rate_limit_exceeded',
      'rate_limit_exceeded',
    ]);
    expect(keys.findByHash).toHaveBeenCalledTimes(3);
    const refused = await refusal(auth, `Bearer ${generateApiKey()}`);
    expect(refused).toMatchObject({ status: 429, headers: { 'Retry-After': '55' } });
    // Another address has its own budget; the known key still gets in from the exhausted one.
    expect(await refusal(auth, `Bearer ${generateApiKey()}`, '198.51.100.1')).toMatchObject({
      code: 'invalid_api_key',
    });
    clock.set('2026-11-22T12:00:06Z');
    expect((await auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
    // The next minute the address may try again.
    clock.set('2026-11-22T12:01:00Z');
    expect(await refusal(auth, `Bearer ${generateApiKey()}`)).toMatchObject({ code: 'invalid_api_key' });
  });

  it("asks for the client's address only when a guess's budget needs it, and charges the budget of the address it gets", async () => {
    const { auth } = setup({ API_KEY_FAILED_LOOKUPS_PER_ADDRESS: '1' });
    const address = jest.fn(() => ADDRESS);
    expect((await auth.verify(`Bearer ${KEY}`, address)).ok).toBe(true); // a guess, found: known from now on
    expect(address).toHaveBeenCalledTimes(1);
    address.mockClear();
    expect(auth.verify(`Bearer ${KEY}`, address)).toMatchObject({ ok: true }); // cached
    expect(auth.verify('Bearer nope', address)).toMatchObject({ ok: false }); // malformed
    expect(address).not.toHaveBeenCalled();
    expect(await refusal(auth, `Bearer ${generateApiKey()}`, address)).toMatchObject({
      code: 'invalid_api_key',
    });
    expect(address).toHaveBeenCalledTimes(1);
    // The budget charged was ADDRESS's: a plain ADDRESS is now over it.
    expect(await refusal(auth, `Bearer ${generateApiKey()}`)).toMatchObject({ code: 'rate_limit_exceeded' });
  });

  it('overshoots the address budget under concurrency by fewer than the lookups running at once (half the pool)', async () => {
    const { auth, keys } = setup({ API_KEY_FAILED_LOOKUPS_PER_ADDRESS: '5' });
    const results = await Promise.all(
      Array.from({ length: 40 }, async () => auth.verify(`Bearer ${generateApiKey()}`, ADDRESS)),
    );
    // DB_POOL_MAX 10: five lookups at once, which all fail, and then the budget of 5 is spent.
    expect(keys.findByHash).toHaveBeenCalledTimes(5);
    expect(results.filter((r) => !r.ok && r.error.code === 'rate_limit_exceeded')).toHaveLength(35);
  });

  it('bounds lookups of never-found version 1 keys per instance, whatever the addresses (token bucket on the clock)', async () => {
    const { auth, keys, clock } = setup({ API_KEY_UNKNOWN_LOOKUPS_PER_SECOND: '20' });
    const results = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => auth.verify(`Bearer ${generateApiKey()}`, `10.0.${i}.1`)),
    );
    expect(keys.findByHash).toHaveBeenCalledTimes(20);
    const busy = results.filter((r) => !r.ok && r.error.status === 503);
    expect(busy).toHaveLength(80);
    expect(busy[0]).toMatchObject({ error: { code: 'service_unavailable', headers: { 'Retry-After': '1' } } });
    // Half a second refills half the bucket.
    clock.set('2026-11-22T12:00:05.500Z');
    await Promise.all(
      Array.from({ length: 30 }, async (_, i) => auth.verify(`Bearer ${generateApiKey()}`, `10.1.${i}.1`)),
    );
    expect(keys.findByHash).toHaveBeenCalledTimes(30);
  });

  it('accepts 100 valid never-seen version 1 keys sent at once from one address, whatever the budgets', async () => {
    const secrets = Array.from({ length: 100 }, () => generateApiKey());
    const rows = new Map(secrets.map((k, i) => [hashApiKey(k), stored({ id: BigInt(i + 1), hash: hashApiKey(k) })]));
    const { auth, keys } = setup({ API_KEY_FAILED_LOOKUPS_PER_ADDRESS: '1', API_KEY_UNKNOWN_LOOKUPS_PER_SECOND: '1' });
    keys.findByHash.mockImplementation(async (hash: string) => rows.get(hash) ?? null);
    const results = await Promise.all(secrets.map(async (k) => auth.verify(`Bearer ${k}`, ADDRESS)));
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(keys.findByHash).toHaveBeenCalledTimes(100);
  });

  it('refuses an expired key with api_key_expired, judged at the current instant even when cached', async () => {
    const { auth, clock } = setup({}, stored({ expiresAt: new Date('2026-11-22T12:00:10Z') }));
    expect((await auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
    clock.set('2026-11-22T12:00:10Z');
    expect(await refusal(auth, `Bearer ${KEY}`)).toMatchObject({ status: 401, code: 'api_key_expired' });
  });

  it("accepts a rolled key's previous secret until its overlap ends, then refuses it with api_key_expired", async () => {
    const { auth, clock } = setup({}, stored({ previousExpiresAt: new Date('2026-11-22T13:00:00Z') }));
    expect((await auth.verify(`Bearer ${KEY}`, ADDRESS)).ok).toBe(true);
    clock.set('2026-11-22T13:00:00Z');
    const error = await refusal(auth, `Bearer ${KEY}`);
    expect(error).toMatchObject({ status: 401, code: 'api_key_expired' });
    expect(error.message).toContain('replaced by a roll');
  });
});
