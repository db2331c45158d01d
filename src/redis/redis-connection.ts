import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../config/redis.config.js';

/** A connection to the configured Redis, whichever its topology: both answer the same commands. */
export type RedisConnection = Redis | Cluster;

/**
 * Options of one connection, as for a single server. `retryStrategy` paces reconnection (of the
 * cluster as a whole, for a cluster).
 */
export type ConnectionOptions = Pick<
  RedisOptions,
  | 'lazyConnect'
  | 'enableOfflineQueue'
  | 'enableAutoPipelining'
  | 'maxRetriesPerRequest'
  | 'autoResendUnfulfilledCommands'
  | 'commandTimeout'
  | 'connectTimeout'
  | 'disconnectTimeout'
  | 'connectionName'
  | 'retryStrategy'
>;

/**
 * Connects to `target`. A cluster follows its slots (MOVED) and its failovers (it asks a node for
 * the slots again), never resending a command whose connection closed under it: it may have run
 * (a resent rate-limit script would count a request twice). A sentinel-watched master is found by
 * asking the sentinels, again after every disconnection, so a failover is followed.
 */
export function connectRedis(target: RedisTarget, options: ConnectionOptions): RedisConnection {
  switch (target.kind) {
    case 'single':
      return new Redis(target.url, options);
    case 'sentinel':
      return new Redis({
        ...options,
        sentinels: target.sentinels,
        name: target.name,
        username: target.username,
        password: target.password,
        sentinelPassword: target.sentinelPassword,
        sentinelRetryStrategy: options.retryStrategy ?? undefined,
        // A master demoted by a failover answers writes with READONLY: reconnect, which asks the
        // sentinels for the new one. (Not ioredis's failoverDetector: its disconnect during a
        // reconnection through the sentinels ends the connection for good.)
        reconnectOnError: (err) => err.message.startsWith('READONLY'),
      });
    case 'cluster': {
      const { lazyConnect, enableOfflineQueue, enableAutoPipelining, retryStrategy, ...node } = options;
      return new Cluster(target.nodes, {
        lazyConnect,
        enableOfflineQueue,
        enableAutoPipelining,
        clusterRetryStrategy: retryStrategy ?? undefined,
        retryDelayOnFailover: 0,
        redisOptions: { ...node, username: target.username, password: target.password },
      });
    }
  }
}

/** Closes a connection: QUIT when it is ready (replies in flight are read), else its socket at once. */
export async function closeRedis(connection: RedisConnection): Promise<void> {
  if (connection.status === 'ready') {
    try {
      await connection.quit();
      return;
    } catch {
      // fall through: close the socket
    }
  }
  connection.disconnect();
}
