export interface PgbouncerIniOptions {
  /** The PostgreSQL behind PgBouncer: its host, port and user (the database name is not used). */
  serverUrl: string;
  /** The loopback port PgBouncer listens on. */
  port: number;
  /** Server connections per database and user (`default_pool_size`, 20). */
  poolSize?: number;
  /** Where it logs and writes its pid (for `pgbouncer -d`); without them it logs to stderr, in the foreground. */
  logFile?: string;
  pidFile?: string;
}

export function writePgbouncerIni(dir: string, options: PgbouncerIniOptions): string;
