// The lines the service writes to its log during a run (the access lines per request of the
// fixed-rate table, and the check that request logging is on), counted from the file's size
// before the run: the whole file grows to tens of MB over the bench, and reading all of it is
// work the load generator would do just before and just after each measured load.
import { Buffer } from 'node:buffer';
import { closeSync, openSync, readSync, statSync } from 'node:fs';

const CHUNK = 1 << 20;

/** A log file's size in bytes now (0 before it exists): where linesSince starts counting. */
export function logOffset(file) {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** The lines written to `file` after byte `offset`, read in chunks of CHUNK bytes (0 if there is no file). */
export function linesSince(file, offset) {
  let fd;
  try {
    fd = openSync(file, 'r');
  } catch {
    return 0;
  }
  try {
    const chunk = Buffer.allocUnsafe(CHUNK);
    let lines = 0;
    for (let at = offset, read; (read = readSync(fd, chunk, 0, CHUNK, at)) > 0; at += read) {
      for (let i = chunk.indexOf(10); i !== -1 && i < read; i = chunk.indexOf(10, i + 1)) lines++;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}
