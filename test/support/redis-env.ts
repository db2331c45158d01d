import { Redis } from 'ioredis';
import { describeIf } from './describe-if.js';

/**
 * Redis for the tests: the server of REDIS_URL (CI sets it), shared with other suites and other
 * runs, so every suite counts under a key prefix of its own and deletes its keys afterwards.
 * Nothing here assumes a Redis on localhost: `npm test` needs nothing installed.
 */
export function redisUrl(): string | undefined {
  return process.env.REDIS_URL || undefined;
}

/** Suites that need a Redis server: skipped with a notice when REDIS_URL is unset. */
export function describeWithRedis(title: string, suite: () => void): void {
  describeIf(
    redisUrl() !== undefined,
    'REDIS_URL is unset: the Redis suites do not run (e.g. REDIS_URL=redis://127.0.0.1:6379)',
  )(title, suite);
}

/** A key prefix no other suite, process or run uses. */
export function redisPrefix(what: string): string {
  return `test:${what}:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;
}

/** Deletes every key under `prefix` (best effort: if Redis is gone, the keys expire with their windows). */
export async function dropRedisKeys(prefix: string, url = redisUrl()): Promise<void> {
  if (!url) return;
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await admin.connect();
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
  } catch {
    // Redis gone: see above.
  } finally {
    admin.disconnect();
  }
}

/**
 * With REDIS_URL set, an app's settings to count its rate limits in that Redis under a prefix of
 * its own, and a cleanup that deletes the prefix's keys; without it, nothing (memory counters).
 */
export function redisEnv(what: string): { env: Record<string, string>; prefix?: string; cleanup: () => Promise<void> } {
  const url = redisUrl();
  if (!url) return { env: {}, cleanup: async () => {} };
  const prefix = redisPrefix(what);
  return { env: { REDIS_URL: url, RATE_LIMIT_PREFIX: prefix }, prefix, cleanup: () => dropRedisKeys(prefix, url) };
}
