import { spawn } from 'node:child_process';
import path from 'node:path';
import { buildService } from './built-service.js';

/** How long a service the key tool's suites start may take to be ready (PGlite on a busy machine). */
export const KEY_TOOL_START_TIMEOUT_MS = 90_000;

/**
 * The key tool's suites' shared setup: each run of the tool on the embedded database starts
 * PGlite (seconds on a busy machine), so tests get 180 s, and the service is built once first.
 */
export function keyToolSuite(): void {
  jest.setTimeout(180_000);
  beforeAll(() => {
    buildService();
  }, 180_000);
}

/** What a run of the key tool printed, and how it exited. */
export interface KeyToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built key tool (`dist/cli/apikey.js`) with `args`, in `env` alone (and PATH). */
export function runKeyTool(args: string[], env: Record<string, string>): Promise<KeyToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(path.dirname(buildService()), 'cli/apikey.js'), ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs the key tool with --json and returns the one JSON line it printed (exit 0 expected). */
export async function keyToolJson<T>(args: string[], env: Record<string, string>): Promise<T> {
  const run = await runKeyTool([...args, '--json'], env);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  expect(run.stdout.endsWith('\n')).toBe(true);
  expect(run.stdout.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(run.stdout) as T;
}

/** A key as `apikey list --json` shows it. */
export interface ListedKey {
  id: number;
  name: string;
  plan: string;
  perMinute: number;
  perDay: number;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** Version 1 keys: the development key (no checksum secret in development). */
export const KEY_V1 = /ask_[0-9A-Za-z]{49}/;
/** Version 2 keys: what the tool issues with API_KEY_CHECKSUM_SECRET. */
export const KEY_V2 = /ask2_[0-9A-Za-z]{65}/;
/** The checksum secret the key tool's tests issue version 2 keys with. */
export const KEY_TOOL_CHECKSUM_SECRET = 'tool-test-checksum-secret-0123456789abcdef';
