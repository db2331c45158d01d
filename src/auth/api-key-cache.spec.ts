import type { StoredApiKey } from '../api-keys/api-keys.service.js';
import { storedApiKey } from '../../test/factories/stored-api-key.factory.js';
import { ApiKeyCache, CACHE_MAX, cacheClock } from './api-key-cache.js';

const key = (n: number): StoredApiKey => storedApiKey({ id: BigInt(n), hash: `hash-${n}` });

describe('ApiKeyCache.warm', () => {
  it('keeps the first CACHE_MAX keys it is given', () => {
    const cache = new ApiKeyCache(60_000, async () => null);
    const keys = Array.from({ length: CACHE_MAX + 5 }, (_, i) => key(i));
    cache.warm(keys, cacheClock.now());
    expect(cache.cached('hash-0')).toBe(keys[0]);
    expect(cache.cached(`hash-${CACHE_MAX - 1}`)).toBe(keys[CACHE_MAX - 1]);
    expect(cache.cached(`hash-${CACHE_MAX}`)).toBeUndefined();
    expect(cache.isKnown('hash-0')).toBe(true);
  });

  it('keeps a lookup already cached', async () => {
    const find = jest.fn(async (hash: string) => ({ ...key(-1), hash }));
    const cache = new ApiKeyCache(60_000, find);
    const looked = await cache.lookup('hash-3');
    cache.warm([key(2), key(3)], cacheClock.now());
    expect(cache.cached('hash-3')).toBe(looked);
    expect(cache.cached('hash-2')?.id).toBe(2n);
    expect(find).toHaveBeenCalledTimes(1);
  });

  it('caches nothing when the cache is off', () => {
    const cache = new ApiKeyCache(0, async () => null);
    cache.warm([key(1)], cacheClock.now());
    expect(cache.cached('hash-1')).toBeUndefined();
  });
});
