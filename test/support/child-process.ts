import type { ChildProcess } from 'node:child_process';

/** A child process of a test (the built service, HAProxy): its output so far, and its end. */
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

export function watchChild(child: ChildProcess): WatchedChild {
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));
  return {
    output: () => out,
    exited,
    done: () => done,
    async stop(signal, killAfterMs) {
      if (!done) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
