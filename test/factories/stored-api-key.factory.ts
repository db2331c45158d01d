import type { StoredApiKey } from '../../src/api-keys/api-keys.service.js';

/** A stored pro key as authentication sees it (id 7, never used, every scope); override any field. */
export function storedApiKey(overrides: Partial<StoredApiKey> = {}): StoredApiKey {
  return {
    id: 7n,
    hash: 'hash-7',
    plan: 'pro',
    perMinute: 300,
    perDay: 10_000,
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: null,
    previousExpiresAt: null,
    scopes: ['pets:read', 'pets:write'],
    ...overrides,
  };
}
