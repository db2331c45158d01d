import { Redis } from 'ioredis';

/**
 * With REDIS_URL set (as in CI), an app's settings to count its rate limits in that Redis under
 * a prefix of its own, and a cleanup that deletes the prefix's keys; without it, nothing.
 */
export function redisEnv(what: string): { env: Record<string, string>; cleanup: () => Promise<void> } {
  const url = process.env.REDIS_URL;
  if (!url) return { env: {}, cleanup: async () => {} };
  const prefix = `test:${what}:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;
  return {
    env: { REDIS_URL: url, RATE_LIMIT_PREFIX: prefix },
    async cleanup() {
      const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await admin.connect();
        const keys = await admin.keys(`${prefix}*`);
        if (keys.length > 0) await admin.del(...keys);
      } catch {
        // Redis gone: the keys expire with their windows anyway.
      } finally {
        admin.disconnect();
      }
    },
  };
}
