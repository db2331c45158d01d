import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository's compose file, run as shipped. */
export const COMPOSE_FILE = path.resolve('docker-compose.yml');

/**
 * docker-compose (1.29) on the repository's compose file and, optionally, an override of the
 * test's, as project `project`, with `envFile` as its .env. Its environment holds only PATH, HOME
 * and `engineEnv` (DOCKER_HOST): none of the test process's variables (CI exports DATABASE_URL,
 * REDIS_URL…) can reach the stack's interpolation, so the settings are exactly the env file's.
 */
export class Compose {
  constructor(
    private readonly options: {
      project: string;
      envFile: string;
      overrideFile?: string;
      engineEnv?: Record<string, string>;
    },
  ) {}

  private args(args: string[]): string[] {
    const { project, envFile, overrideFile } = this.options;
    return [
      '--ansi',
      'never',
      '-p',
      project,
      '--env-file',
      envFile,
      '-f',
      COMPOSE_FILE,
      ...(overrideFile ? ['-f', overrideFile] : []),
      ...args,
    ];
  }

  /** Runs `docker-compose … args`; its stdout. Rejects with its output on a non-zero exit. */
  async run(args: string[], { timeoutMs = 120_000, env = {} as Record<string, string> } = {}): Promise<string> {
    try {
      const { stdout } = await run('docker-compose', this.args(args), {
        cwd: path.dirname(COMPOSE_FILE),
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? '/root',
          ...this.options.engineEnv,
          ...env,
        },
        timeout: timeoutMs,
        maxBuffer: 256 * 1024 * 1024,
      });
      return stdout;
    } catch (err) {
      const e = err as Error & { stdout?: string; stderr?: string; code?: number | string };
      throw new Error(
        `docker-compose ${args.join(' ')} failed (${e.code ?? e.message}):\n${(e.stdout ?? '') + (e.stderr ?? '')}`,
        { cause: err },
      );
    }
  }
}

/**
 * A copy of .env.example with `values` set, as a user makes .env: each replaces the line that
 * sets or shows (commented out) its variable, or is appended.
 */
export function writeEnvFile(file: string, values: Record<string, string>): void {
  const lines = readFileSync(path.resolve('.env.example'), 'utf8').split('\n');
  for (const [name, value] of Object.entries(values)) {
    const at = lines.findIndex((l) => new RegExp(`^(# )?${name}=`).test(l));
    if (at === -1) lines.push(`${name}=${value}`);
    else lines[at] = `${name}=${value}`;
  }
  writeFileSync(file, lines.join('\n'));
}
