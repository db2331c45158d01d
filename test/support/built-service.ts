import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { acquireDataDirLock, DataDirLock, DataDirLockedError } from '../../src/database/data-dir-lock.js';
import { watchChild } from './child-process.js';
import { freePort } from './local-servers.mjs';
import { waitFor } from './wait-for.js';

/**
 * The service as a separate process, the way `npm start` runs it: compiled with the build's
 * tsconfig and started with node. Compiled once per source state into .tmp/test-dist/<state>.
 */
const BUILDS = path.resolve('.tmp/test-dist');

/** Node's flags for the server process, as `npm start` and the image's CMD pass them (test/process/heap-tuning.e2e-spec.ts keeps them and the bench's equal). */
export const SERVICE_NODE_FLAGS = ['--no-allocation-site-pretenuring', '--heap-growing-percent=100'];

function newestSourceMtime(dir = 'src'): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Blocks the thread for `ms` (buildService is synchronous: suites call it at module scope too). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Compiles the service unless this source state is built already; returns its main.js. Jest
 * workers and processes side by side (CI runs Node 20 and Node 24 at once) compile each state
 * once: the first takes the embedded database's pid lock on `<state>.lock` and the others wait
 * for the build, or take the lock over when its process has died.
 */
export function buildService(): string {
  const state = String(Math.trunc(newestSourceMtime()));
  const dir = path.join(BUILDS, state);
  const deadline = Date.now() + 300_000;
  while (!existsSync(dir)) {
    let lock: DataDirLock;
    try {
      lock = acquireDataDirLock(`${dir}.lock`, 'test build');
    } catch (err) {
      if (!(err instanceof DataDirLockedError)) throw err;
      if (Date.now() > deadline) throw new Error(`another process has been building ${dir} for 300 s`, { cause: err });
      sleepSync(200);
      continue;
    }
    try {
      // Built by another process between the check above and the lock.
      if (!existsSync(dir)) compileInto(dir);
    } finally {
      lock.release();
    }
    // Builds of earlier source states, and their lock folders, are of no more use (best effort:
    // one may be in use).
    for (const old of readdirSync(BUILDS)) {
      const oldState = /^(\d+)(\.lock)?$/.exec(old)?.[1];
      if (oldState !== undefined && oldState !== state)
        rmSync(path.join(BUILDS, old), { recursive: true, force: true });
    }
  }
  return path.join(dir, 'main.js');
}

/** tsc with the build's tsconfig into a directory of its own, renamed into place in one step. */
function compileInto(dir: string): void {
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', building],
    {
      stdio: 'inherit',
    },
  );
  try {
    renameSync(building, dir);
  } catch (err) {
    if (!existsSync(dir)) throw err;
    rmSync(building, { recursive: true, force: true });
  }
}

export { freePort };

export interface RunningService {
  child: ChildProcess;
  port: number;
  url: string;
  output(): string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the built service and waits until /healthz answers (or the process exits). On a free
 * port, or on `port` (a restart behind a balancer that knows the instance by its address).
 */
export async function startService(
  env: Record<string, string>,
  timeoutMs = 20_000,
  port?: number,
): Promise<RunningService> {
  const main = buildService();
  port ??= await freePort();
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, main], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watched = watchChild(child);
  const url = `http://127.0.0.1:${port}`;
  // Up when /healthz answers, or over when the process exits (a test of a refused start reads its output).
  try {
    await waitFor(async () => watched.done() || (await fetch(`${url}/healthz`)).ok, {
      what: `the service on port ${port} to answer /healthz`,
      timeoutMs,
      intervalMs: 100,
    });
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${watched.output()}`, { cause: err });
  }
  return {
    child,
    port,
    url,
    output: watched.output,
    exited: watched.exited,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => watched.stop(signal, 15_000),
  };
}
