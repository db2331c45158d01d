import type { DatabaseConfig } from '../config/database.config.js';
import type { Database } from './database.js';

/**
 * Opens the database the configuration selects. `log` receives the embedded database's
 * migration notes; `purpose` names the holder in DATA_DIR's lock (shown to whoever it refuses).
 */
export async function openDatabase(
  config: DatabaseConfig,
  log: (msg: string) => void,
  purpose: string,
): Promise<Database> {
  // Each driver is loaded only when selected: pg and its Prisma adapter, or PGlite, not both,
  // since loading a driver is part of every start (the bench's start to ready).
  if (config.databaseUrl) return (await import('./pg-database.js')).openPostgres(config);
  return (await import('./embedded-database.js')).openEmbedded(config, log, purpose);
}
