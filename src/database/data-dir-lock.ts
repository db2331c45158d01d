import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { LOCK_FILE, lockedMessage, lockHolder, makeDataDir } from '../config/data-dir.js';

/**
 * Exclusive ownership of the embedded database's DATA_DIR. PGlite is single-process: two
 * processes opening the same directory would corrupt it. A `postmaster.lock`-like file created
 * with O_EXCL records the holder's pid and host so the refusal can name it; a lock left by a
 * process that no longer exists on this host is taken over. (Generic lock libraries such as
 * proper-lockfile keep no owner identity and need a refresh timer, so this is written here.)
 * The entry points check DATA_DIR before they act (src/config/data-dir.ts); this takes it.
 */
export class DataDirLockedError extends Error {}

export interface DataDirLock {
  readonly file: string;
  release(): void;
}

export function acquireDataDirLock(dataDir: string, purpose = 'animal-store'): DataDirLock {
  makeDataDir(dataDir);
  const file = path.join(dataDir, LOCK_FILE);
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
      const holder = lockHolder(file);
      if (holder === undefined) continue; // released between our open and read: try again
      if (!holder.live) {
        rmSync(file, { force: true }); // stale: its process is gone
        continue;
      }
      throw new DataDirLockedError(lockedMessage(dataDir, holder.text));
    }
  }
  throw new DataDirLockedError(`could not lock DATA_DIR ${path.resolve(dataDir)}`);
}
