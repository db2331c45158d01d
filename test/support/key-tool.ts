import { spawn } from 'node:child_process';
import path from 'node:path';
import { buildService } from './built-service.js';

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
