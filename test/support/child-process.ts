// watchChild lives in local-servers.mjs, which the bench imports too.
export { watchChild } from './local-servers.mjs';
export type { WatchedChild } from './local-servers.mjs';

/** Whether a process with this pid exists (one of another user counts). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
