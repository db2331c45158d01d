import { issueApiKeyIn } from '../support/api-keys.js';
import { RunningService, startService } from '../support/built-service.js';
import { createTestDatabase, TestDatabase } from '../support/databases.js';
import { redisPrefix } from '../support/redis-env.js';
import {
  clusterRecovered,
  RunningRedisCluster,
  RunningRedisSentinel,
  startRedisCluster,
  startRedisSentinel,
} from '../support/local-servers.mjs';
import { waitFor } from '../support/wait-for.js';

/*
 * Two instances of the built service counting rate limits in a real Redis Cluster (3 masters, 3
 * replicas) and in a real master and replica watched by 3 sentinels, each started here from
 * redis-server on loopback ports. Under load a master is killed: no request fails, the
 * instances count per instance while the failover runs and share exact counts after it.
 * Needs PostgreSQL (DATABASE_URL, the machine's by default) and redis-server.
 */
process.env.DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/postgres';

const DAY_LIMIT = 30;

interface Topology {
  name: string;
  env: Record<string, string>;
  /** Kills the master that serves `hashTag`'s keys; resolves when the topology has a master for them again. */
  failover(hashTag: string): Promise<void>;
  stop(): Promise<void>;
}

async function send(url: string, apiKey: string): Promise<{ status: number; remaining: string | null; body: string }> {
  const res = await fetch(`${url}/v1/pets?limit=5`, { headers: { Authorization: `Bearer ${apiKey}` } });
  return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining'), body: await res.text() };
}

function failoverSuite(start: () => Promise<Topology>) {
  let db: TestDatabase;
  let topology: Topology;
  const instances: RunningService[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    topology = await start();
    const env = { ...db.env, ...topology.env, LOG_LEVEL: 'info', RATE_LIMIT_PREFIX: redisPrefix(topology.name) };
    instances.push(await startService(env), await startService(env));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(instances.map((i) => i.stop()));
    await topology?.stop();
    await db?.drop();
  });

  /** A new key allowed DAY_LIMIT requests a day, sent DAY_LIMIT + 1 requests alternately to the two instances. */
  async function sharedCounts(): Promise<{ statuses: number[]; remaining: (string | null)[] }> {
    const { key } = await issueApiKeyIn(db, { perMinute: DAY_LIMIT, perDay: DAY_LIMIT });
    const statuses: number[] = [];
    const remaining: (string | null)[] = [];
    for (let i = 0; i <= DAY_LIMIT; i++) {
      const answer = await send(instances[i % 2].url, key);
      statuses.push(answer.status);
      remaining.push(answer.remaining);
    }
    return { statuses, remaining };
  }
  const exact = {
    statuses: [...Array<number>(DAY_LIMIT).fill(200), 429],
    remaining: [...Array.from({ length: DAY_LIMIT }, (_, i) => String(DAY_LIMIT - 1 - i)), '0'],
  };

  it('is ready with Redis up, and both instances share exact counts', async () => {
    for (const instance of instances) {
      const res = await fetch(`${instance.url}/readyz`);
      expect({ status: res.status, body: await res.text() }).toEqual({
        status: 200,
        body: expect.stringContaining('"redis":{"status":"up"}'),
      });
    }
    expect(await sharedCounts()).toEqual(exact);
  });

  it('serves every request while a master dies, counting per instance meanwhile, and counts exactly again after', async () => {
    const { id, key } = await issueApiKeyIn(db);
    const statuses = new Map<number, number>();
    const samples: string[] = [];
    let stopping = false;
    let sent = 0;
    const workers = Array.from({ length: 16 }, async (_, w) => {
      while (!stopping) {
        const answer = await send(instances[w % 2].url, key).catch((err: Error) => ({
          status: 0,
          remaining: null,
          body: err.message,
        }));
        sent += 1;
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status !== 200 && samples.length < 5) samples.push(`${answer.status} ${answer.body}`);
      }
    });
    try {
      await waitFor(() => sent >= 200, { what: '200 requests before the failover' });
      await topology.failover(`{key:${id}}`);
      // Both instances noticed (they counted in memory), and both are back on Redis.
      for (const instance of instances) {
        await waitFor(() => /Redis unavailable[^\n]*\n[\s\S]*Redis answers again/.test(instance.output()), {
          what: 'the instance to fall back to memory and return to Redis',
          timeoutMs: 60_000,
        });
      }
      const after = sent;
      await waitFor(() => sent >= after + 200, { what: '200 requests after the failover' });
    } finally {
      stopping = true;
      await Promise.all(workers);
    }
    console.log(
      `[infra] ${topology.name} failover: ${sent} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(samples).toEqual([]);
    expect([...statuses.keys()]).toEqual([200]);
    expect(await sharedCounts()).toEqual(exact);
    // Readiness's own connection finds the new master too.
    for (const instance of instances) {
      await waitFor(
        async () => (await fetch(`${instance.url}/readyz`).then((r) => r.text())).includes('"redis":{"status":"up"}'),
        {
          what: 'readiness to report Redis up again',
        },
      ).catch((err: Error) => {
        throw new Error(
          `${err.message}\n${instance
            .output()
            .split('\n')
            .filter((l) => !l.includes('request completed'))
            .join('\n')}`,
        );
      });
    }
  }, 120_000);
}

describe('two instances on a Redis Cluster (3 masters, 3 replicas)', () => {
  failoverSuite(async () => {
    const cluster: RunningRedisCluster = await startRedisCluster();
    return {
      name: 'cluster',
      env: { REDIS_CLUSTER_NODES: cluster.nodesEnv, REDIS_PASSWORD: cluster.password },
      async failover(hashTag) {
        const master = await cluster.masterOf(hashTag);
        await cluster.kill(master);
        await waitFor(async () => (await cluster.masterOf(hashTag)) !== master, {
          what: 'a replica to take over the slot',
          timeoutMs: 60_000,
          intervalMs: 100,
        });
        await clusterRecovered(cluster);
      },
      stop: () => cluster.stop(),
    };
  });
});

describe('two instances on a Redis master watched by 3 sentinels', () => {
  failoverSuite(async () => {
    const setup: RunningRedisSentinel = await startRedisSentinel();
    return {
      name: 'sentinel',
      env: { REDIS_SENTINELS: setup.sentinelsEnv, REDIS_SENTINEL_NAME: setup.name, REDIS_PASSWORD: setup.password },
      async failover() {
        await setup.master.watched.stop('SIGKILL', 5000);
        await waitFor(async () => (await setup.masterPort()) === setup.replica.port, {
          what: 'the sentinels to promote the replica',
          timeoutMs: 60_000,
          intervalMs: 100,
        });
      },
      stop: () => setup.stop(),
    };
  });
});
