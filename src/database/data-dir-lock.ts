import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/**
 * Exclusive ownership of the embedded database's DATA_DIR. PGlite is single-process: two
 * processes opening the same directory would corrupt it. A `postmaster.lock`-like file created
 * with O_EXCL records the holder's pid and host so the refusal can name it; a lock left by a
 * process that no longer exists on this host is taken over. (Generic lock libraries such as
 * proper-lockfile keep no owner identity and need a refresh timer, so this is written here.)
 */
export class DataDirLockedError extends Error {}

export interface DataDirLock {
  readonly file: string;
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireDataDirLock(dataDir: string, purpose = 'animal-store'): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'animal-store.lock');
  const me = `${process.pid}\n${hostname()}\n${purpose}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, me);
      closeSync(fd);
      let released = false;
      return {
        file,
        release() {
          if (released) return;
          released = true;
          try {
            if (readFileSync(file, 'utf8') === me) rmSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder: string;
      try {
        holder = readFileSync(file, 'utf8');
      } catch {
        continue; // released between our open and read: try again
      }
      const [pidText, host, what] = holder.split('\n');
      const pid = Number(pidText);
      const sameHost = host === hostname();
      if (sameHost && Number.isInteger(pid) && pid > 0 && !alive(pid)) {
        rmSync(file, { force: true }); // stale: its process is gone
        continue;
      }
      throw new DataDirLockedError(
        `DATA_DIR ${path.resolve(dataDir)} is in use by process ${pidText || '?'}` +
          `${host ? ` on ${host}` : ''}${what ? ` (${what})` : ''}; ` +
          `the embedded database allows one process at a time. Stop it, or set DATABASE_URL to use PostgreSQL.`,
      );
    }
  }
  throw new DataDirLockedError(`could not lock DATA_DIR ${path.resolve(dataDir)}`);
}
