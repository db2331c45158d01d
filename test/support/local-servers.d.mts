import type { ChildProcess } from 'node:child_process';

export function freePort(from?: number): Promise<number>;
export function freeClusterPort(): Promise<number>;

export const WAIT_FOR_TIMEOUT_MS: number;
export interface WaitForOptions {
  /** What is awaited, for the failure message ("the access log line of req-1"). */
  what: string;
  /** Default 20 s. */
  timeoutMs?: number;
  /** Between two checks; default 25 ms. */
  intervalMs?: number;
}
export function waitFor<T>(
  condition: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitForOptions,
): Promise<T>;

/** A child process of a test (the built service, HAProxy, a redis-server): its output so far, and its end. */
export interface WatchedChild {
  /** stdout and stderr, interleaved as they came. */
  output(): string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Whether it has exited. */
  done(): boolean;
  /** Sends `signal` unless it has exited, and SIGKILL if it is still there after `killAfterMs`. */
  stop(signal: NodeJS.Signals, killAfterMs: number): Promise<number | null>;
}
export function watchChild(child: ChildProcess): WatchedChild;

export function redisCli(port: number, password: string | undefined, ...args: string[]): Promise<string>;

/** One redis-server (a data node or a sentinel) of a topology, on a loopback port. */
export interface RedisProcess {
  port: number;
  child: ChildProcess;
  watched: WatchedChild;
}

export function startRedisProcess(dir: string, args: string[], port: number): Promise<RedisProcess>;

export interface RunningRedisCluster {
  password: string;
  nodes: RedisProcess[];
  /** REDIS_CLUSTER_NODES for the service: every node (any one would do). */
  nodesEnv: string;
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /** SIGKILLs the node on `port`. */
  kill(port: number): Promise<void>;
  stop(): Promise<void>;
}
export function startRedisCluster(): Promise<RunningRedisCluster>;
export function clusterRecovered(cluster: RunningRedisCluster): Promise<void>;

export interface RunningRedisSentinel {
  password: string;
  name: string;
  master: RedisProcess;
  replica: RedisProcess;
  sentinels: RedisProcess[];
  /** REDIS_SENTINELS for the service. */
  sentinelsEnv: string;
  /** The master's port as the sentinels report it now. */
  masterPort(): Promise<number>;
  stop(): Promise<void>;
}
export function startRedisSentinel(options?: { name?: string }): Promise<RunningRedisSentinel>;

export interface RunningPgbouncer {
  /** `postgresql://user@127.0.0.1:port/` : append a database name. */
  host: string;
  port: number;
  pid: number;
  log(): string;
  stop(): Promise<void>;
}
export function startPgbouncer(
  serverUrl: string,
  options?: { poolSize?: number; bin?: string },
): Promise<RunningPgbouncer>;
