export interface SentinelConfOptions {
  /** The loopback port the sentinel listens on. */
  port: number;
  /** The name of the master it watches. */
  name: string;
  /** The master's loopback port. */
  masterPort: number;
  /** The data nodes' password. */
  password: string;
  /** How long the master may be silent before it is taken as down (Redis's default: 30 s). */
  downAfterMs?: number;
  /** How long a failover may take (Redis's default: 3 minutes). */
  failoverTimeoutMs?: number;
}

export function writeSentinelConf(dir: string, options: SentinelConfOptions): string;
