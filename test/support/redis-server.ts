import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort, startRedisProcess } from './local-servers.mjs';

/**
 * A redis-server of a test's own, on a loopback port, with the arguments it needs (e.g. a memory
 * policy); `admin` is connected to it. Started again on the same `port`, it comes back at the
 * same address, empty.
 */
export interface OwnRedis {
  port: number;
  url: string;
  admin: Redis;
  stop(): Promise<void>;
}

/** Starts `redis-server` (installed with the machine's Redis) with `args`, on `port` or a free one; stopped by its PID. */
export async function startOwnRedis(args: string[] = [], { port }: { port?: number } = {}): Promise<OwnRedis> {
  port ??= await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-redis-'));
  const base = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  const server = await startRedisProcess(dir, [...base, ...args], port).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const url = `redis://127.0.0.1:${port}`;
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  const stop = async () => {
    admin.disconnect();
    await server.watched.stop('SIGTERM', 5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await admin.connect();
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, url, admin, stop };
}
