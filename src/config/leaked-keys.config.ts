import { readFile, stat } from 'node:fs/promises';
import { defineConfig, type ConfigOf } from './define-config.js';
import { oneOf, optional } from './env.js';
import { MAX_KEYS_FILE_BYTES, parseGithubPublicKeys } from './github-public-keys.js';

export const LEAKED_KEY_ACTIONS = ['revoke', 'notify'] as const;
export type LeakedKeyAction = (typeof LEAKED_KEY_ACTIONS)[number];

/**
 * Reports of leaked API keys (docs/api-keys.md, "When a key leaks"): what a report does, and
 * GitHub's secret scanning, on when SECRET_SCANNING_GITHUB_KEYS names the file of GitHub's public
 * keys. The start-up check reads and parses that file.
 */
export const leakedKeysConfig = defineConfig(
  'leakedKeys',
  (env) => ({
    /** revoke: a reported live key is revoked; notify: the leak is recorded and the key keeps working. */
    leakedKeyAction: oneOf<LeakedKeyAction>(env, 'LEAKED_KEY_ACTION', LEAKED_KEY_ACTIONS, 'revoke'),
    /** Path of GitHub's secret scanning public keys; undefined: POST /v1/secret-scanning/github does not exist. */
    secretScanningGithubKeys: optional(env, 'SECRET_SCANNING_GITHUB_KEYS'),
  }),
  async (config, env) => {
    const path = config.secretScanningGithubKeys;
    if (path === undefined || !env.ok('SECRET_SCANNING_GITHUB_KEYS')) return;
    const problem = await keysFileProblem(path);
    if (problem !== undefined) {
      env.problem(
        `SECRET_SCANNING_GITHUB_KEYS names ${path}, which ${problem} (fetch it from https://api.github.com/meta/public_keys/secret_scanning)`,
        'SECRET_SCANNING_GITHUB_KEYS',
      );
    }
  },
);
export type LeakedKeysConfig = ConfigOf<typeof leakedKeysConfig>;

/** What is wrong with the keys file at `path`, or undefined when it reads and parses. */
export async function keysFileProblem(path: string): Promise<string | undefined> {
  try {
    const { size, isFile } = await stat(path).then((s) => ({ size: s.size, isFile: s.isFile() }));
    if (!isFile) return 'is not a file';
    if (size > MAX_KEYS_FILE_BYTES) return `is larger than ${MAX_KEYS_FILE_BYTES} bytes`;
    parseGithubPublicKeys(await readFile(path, 'utf8'));
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === undefined ? `cannot be used: ${(err as Error).message}` : `cannot be read (${code})`;
  }
}
