import { defineConfig, type ConfigOf } from './define-config.js';
import { int, optional, url, type Reader } from './env.js';
import { refusePublicPassword } from './placeholder-passwords.js';
import { runtimeConfig } from './runtime.config.js';

export interface RedisNode {
  host: string;
  port: number;
}

/**
 * Where Redis is: one server (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES, some of its nodes;
 * the others are discovered), or a master watched by Sentinel (REDIS_SENTINELS and
 * REDIS_SENTINEL_NAME; the current master is asked of the sentinels). The password of a cluster's
 * or a sentinel-watched master's nodes is REDIS_PASSWORD; the sentinels' own is REDIS_SENTINEL_PASSWORD.
 */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[]; username?: string; password?: string }
  | {
      kind: 'sentinel';
      sentinels: RedisNode[];
      name: string;
      username?: string;
      password?: string;
      sentinelPassword?: string;
    };

/** The Redis shared by the instances (rate limits; readiness checks it). */
export const redisConfig = defineConfig('redis', (env, use) => {
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
  refusePublicPassword(env, 'REDIS_URL', redisUrl, use(runtimeConfig).nodeEnv === 'production');
  return {
    redisUrl,
    /** Undefined: no Redis (rate limits count in memory). */
    redisTarget: redisTarget(env, redisUrl),
    /** Redis command and connect timeouts: past them a request is decided in memory instead. */
    redisCommandTimeoutMs: int(env, 'REDIS_COMMAND_TIMEOUT_MS', 500, 10, 60_000),
    redisConnectTimeoutMs: int(env, 'REDIS_CONNECT_TIMEOUT_MS', 2000, 10, 60_000),
  };
});
export type RedisConfig = ConfigOf<typeof redisConfig>;

function redisTarget(env: Reader, redisUrl: string | undefined): RedisTarget | undefined {
  const clusterNodes = optional(env, 'REDIS_CLUSTER_NODES');
  const sentinels = optional(env, 'REDIS_SENTINELS');
  const given = [redisUrl && 'REDIS_URL', clusterNodes && 'REDIS_CLUSTER_NODES', sentinels && 'REDIS_SENTINELS'].filter(
    Boolean,
  );
  if (given.length > 1) {
    env.problem(`REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS are exclusive, got ${given.join(' and ')}`);
    return undefined;
  }
  const credentials = { username: optional(env, 'REDIS_USERNAME'), password: optional(env, 'REDIS_PASSWORD') };
  if (clusterNodes)
    return { kind: 'cluster', nodes: nodeList(env, 'REDIS_CLUSTER_NODES', clusterNodes), ...credentials };
  if (sentinels) {
    const nodes = nodeList(env, 'REDIS_SENTINELS', sentinels);
    const name = optional(env, 'REDIS_SENTINEL_NAME');
    if (!name) {
      env.problem(
        'REDIS_SENTINEL_NAME must name the master group the sentinels watch (their "sentinel monitor" name)',
        'REDIS_SENTINEL_NAME',
      );
      return undefined;
    }
    return {
      kind: 'sentinel',
      sentinels: nodes,
      name,
      ...credentials,
      sentinelPassword: optional(env, 'REDIS_SENTINEL_PASSWORD'),
    };
  }
  return redisUrl === undefined ? undefined : { kind: 'single', url: redisUrl };
}

/** `host:port,host:port` (an IPv6 address in brackets: `[::1]:7000`). */
function nodeList(env: Reader, name: string, raw: string): RedisNode[] {
  const nodes: RedisNode[] = [];
  for (const entry of raw.split(',')) {
    const m = /^\s*(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})\s*$/.exec(entry);
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535) {
      env.problem(`${name} must be a comma-separated list of host:port, got "${entry.trim().slice(0, 100)}"`, name);
      return [];
    }
    nodes.push({ host: m[1].replace(/^\[|\]$/g, ''), port });
  }
  return nodes;
}
