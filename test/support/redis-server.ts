import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './local-servers.mjs';
import { watchChild } from './child-process.js';
import { waitFor } from './wait-for.js';

/** A redis-server of a test's own, on a free loopback port, with the arguments it needs (e.g. a memory policy). */
export interface OwnRedis {
  url: string;
  admin: Redis;
  stop(): Promise<void>;
}

/** Starts `redis-server` (installed with the machine's Redis) with `args`; stopped by its PID. */
export async function startOwnRedis(args: string[]): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const watched = watchChild(child);
  const url = `redis://127.0.0.1:${port}`;
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  const stop = async () => {
    admin.disconnect();
    await watched.stop('SIGTERM', 5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (watched.done()) throw new Error(`redis-server exited: ${watched.output()}`);
        const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG';
        } finally {
          probe.disconnect();
        }
      },
      { timeoutMs: 10_000, what: 'redis-server to accept connections' },
    );
    await admin.connect();
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, admin, stop };
}
