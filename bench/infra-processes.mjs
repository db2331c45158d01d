// The processes of `npm run bench:infra` (bench/infra.mjs): PgBouncer, a Redis Cluster and Redis
// Sentinel (started by test/support/local-servers.mjs, as the infrastructure tests start them)
// and an OTLP receiver, each stopped at cleanup(), also on failure or a signal.
import http from 'node:http';
import { URL } from 'node:url';
import pg from 'pg';
import { startPgbouncer, startRedisCluster, startRedisSentinel, waitFor } from '../test/support/local-servers.mjs';

export const log = (msg) => process.stderr.write(`[bench:infra] ${msg}\n`);

/** What to undo at the end, last first. */
export const cleanups = [];
export async function cleanup() {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()();
    } catch (err) {
      log(`cleanup: ${err.message}`);
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void cleanup().then(() => process.exit(130)));

/** PgBouncer in front of `serverUrl`'s database; the URL the service takes (`pgbouncer=true`). */
export async function startPooler(serverUrl) {
  const pooler = await startPgbouncer(serverUrl);
  cleanups.push(() => pooler.stop());
  const database = new URL(serverUrl).pathname.slice(1);
  await waitFor(
    async () => {
      const c = new pg.Client({ connectionString: `${pooler.host}${database}` });
      await c.connect();
      await c.end();
      return true;
    },
    { what: 'pgbouncer to accept connections', timeoutMs: 60_000 },
  );
  log(`pgbouncer (pid ${pooler.pid}) on 127.0.0.1:${pooler.port}`);
  return `${pooler.host}${database}?pgbouncer=true`;
}

/** A Redis Cluster (3 masters, 3 replicas): the service's environment for it. */
export async function startCluster() {
  const cluster = await startRedisCluster();
  cleanups.push(() => cluster.stop());
  log(`Redis Cluster on ${cluster.nodesEnv}`);
  return { REDIS_CLUSTER_NODES: cluster.nodesEnv, REDIS_PASSWORD: cluster.password };
}

/** A master and a replica watched by 3 sentinels: the service's environment for it. */
export async function startSentinel() {
  const sentinel = await startRedisSentinel({ name: 'bench' });
  cleanups.push(() => sentinel.stop());
  log(`Redis master ${sentinel.master.port}, replica ${sentinel.replica.port}, sentinels ${sentinel.sentinelsEnv}`);
  return {
    REDIS_SENTINELS: sentinel.sentinelsEnv,
    REDIS_SENTINEL_NAME: sentinel.name,
    REDIS_PASSWORD: sentinel.password,
  };
}

/** An OTLP/HTTP receiver that reads each export and answers 200, counting spans. */
export async function startReceiver() {
  const received = { exports: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on('data', (chunk) => (received.bytes += chunk.length));
    req.on('end', () => {
      received.exports += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${server.address().port}`, received };
}
