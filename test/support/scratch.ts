import { mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { alive } from '../../src/config/data-dir.js';

/**
 * Where suites make their databases and data directories. Each embedded test database is a copy
 * of a migrated PGlite directory (about 40 MB in a thousand files) that the app then writes to;
 * on a memory-backed file system that costs a fraction of what a disk's file system costs the
 * kernel. So: a folder of Linux's /dev/shm when it is a tmpfs with room to spare (a container's
 * default /dev/shm of 64 MB is not), else the system's temporary directory.
 */
const MEMORY_FS = '/dev/shm';
const TMPFS_MAGIC = 0x01021994;
const MIN_FREE_BYTES = 2 * 1024 ** 3;

let root: string | undefined;

function scratchRoot(): string {
  if (root !== undefined) return root;
  root = tmpdir();
  try {
    const fs = statfsSync(MEMORY_FS);
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= MIN_FREE_BYTES) {
      const inMemory = path.join(MEMORY_FS, 'animal-store-tests');
      mkdirSync(inMemory, { recursive: true });
      removeOrphans(inMemory);
      root = inMemory;
    }
  } catch {
    // No /dev/shm (macOS, Windows), or not writable: the temporary directory it is.
  }
  return root;
}

/**
 * Removes the directories of test processes that were killed before cleaning up (each name holds
 * its process's pid): on tmpfs they would hold memory until the machine restarts.
 */
function removeOrphans(dir: string): void {
  for (const name of readdirSync(dir)) {
    const pid = Number(/-p(\d+)-/.exec(name)?.[1]);
    if (pid && !alive(pid)) rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

/** A new empty directory for a suite's database or files, named `<prefix>-p<pid>-<random>`. */
export function scratchDir(prefix: string): string {
  return mkdtempSync(path.join(scratchRoot(), `${prefix}-p${process.pid}-`));
}
