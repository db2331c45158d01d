import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * DATA_DIR, the embedded database's directory, as the entry points check it before they act: a
 * directory this process can create and write, that no other live process holds. Its lock file
 * (the holder's pid, host and purpose, one a line) is taken when the database opens
 * (src/database/data-dir-lock.ts); here it is only read, to refuse early and name the holder.
 */

/** DATA_DIR cannot be a directory this process writes: a file, or a place it cannot create. */
export class DataDirError extends Error {}

/** The lock file in DATA_DIR. */
export const LOCK_FILE = 'animal-store.lock';

/** How long start-up waits for another process to release DATA_DIR before refusing. */
export const DATA_DIR_LOCK_WAIT_MS = 3000;

/** Whether a process with this pid exists on this host (one of another user counts). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function errorText(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
}

/**
 * Creates `dataDir` and its missing parents one level at a time. Not `mkdirSync(…, {recursive})`:
 * on a path the kernel refuses to create under (such as /proc/x) it retries forever instead of
 * failing. Throws DataDirError saying what is in the way.
 */
export function makeDataDir(dataDir: string): void {
  const absolute = path.resolve(dataDir);
  const missing: string[] = [];
  for (let at = absolute; ; at = path.dirname(at)) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(at).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && path.dirname(at) !== at) {
        missing.unshift(at);
        continue;
      }
      if (code === 'ENOTDIR') {
        throw new DataDirError(`DATA_DIR ${absolute} cannot be a directory: part of its path is a file`);
      }
      throw new DataDirError(`DATA_DIR ${absolute} cannot be used: ${at}: ${errorText(err)}`);
    }
    if (!isDirectory) {
      throw new DataDirError(
        at === absolute
          ? `DATA_DIR ${absolute} is a file, not a directory: give the embedded database a directory of its own (it is created when missing)`
          : `DATA_DIR ${absolute} cannot be a directory: ${at} is a file`,
      );
    }
    break;
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory()) continue;
      throw new DataDirError(`DATA_DIR ${absolute} cannot be created: mkdir ${dir}: ${errorText(err)}`);
    }
  }
}

/**
 * Who holds the lock file: undefined when there is none (or it was released as we looked);
 * `live` is false when its process is gone from this host (a stale lock).
 */
export function lockHolder(file: string): { live: boolean; text: string } | undefined {
  let holder: string;
  try {
    holder = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const [pidText, host, what] = holder.split('\n');
  const pid = Number(pidText);
  const stale = host === hostname() && Number.isInteger(pid) && pid > 0 && !alive(pid);
  return { live: !stale, text: `process ${pidText || '?'}${host ? ` on ${host}` : ''}${what ? ` (${what})` : ''}` };
}

/** The refusal of a DATA_DIR another process holds. */
export function lockedMessage(dataDir: string, holder: string): string {
  return (
    `DATA_DIR ${path.resolve(dataDir)} is in use by ${holder}; ` +
    `the embedded database allows one process at a time. Stop it, or set DATABASE_URL to use PostgreSQL.`
  );
}

/**
 * The start-up check of DATA_DIR, before anything is opened: it is (or is created as) a
 * directory this process can write, and no live process holds its lock, waiting up to `waitMs`
 * for one to let go. Resolves to the problem found, or undefined. Takes no lock.
 */
export async function checkDataDir(dataDir: string, waitMs = DATA_DIR_LOCK_WAIT_MS): Promise<string | undefined> {
  try {
    makeDataDir(dataDir);
  } catch (err) {
    if (err instanceof DataDirError) return err.message;
    throw err;
  }
  const probe = path.join(dataDir, `.animal-store-probe-${process.pid}`);
  try {
    closeSync(openSync(probe, 'w', 0o600));
    rmSync(probe, { force: true });
  } catch (err) {
    return `DATA_DIR ${path.resolve(dataDir)} is not writable by this process: ${errorText(err)}`;
  }
  const file = path.join(dataDir, LOCK_FILE);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const holder = lockHolder(file);
    if (!holder?.live) return undefined;
    if (Date.now() >= deadline) return lockedMessage(dataDir, holder.text);
    await sleep(100);
  }
}
