import { checkSlices, type ConfigOf, type ConfigSlice } from './define-config.js';
import { ConfigError, type Env } from './env.js';

/** EX_CONFIG of sysexits(3): what every entry point exits with when its configuration is wrong. */
export const EX_CONFIG = 78;

/**
 * The start-up validation of an entry point (server, migrate command, key tool): the slices it
 * uses (and those they use) are loaded and their checks that need I/O run (HOST resolved,
 * DATA_DIR made and free), before the entry point prints, opens or listens on anything.
 * Resolves to the configuration, or to undefined once every problem was written to
 * `writeError` in one message, `configuration error: …`: the caller then ends with EX_CONFIG,
 * each in its own way (exit, or returning the code to a test). Only the given slices are read,
 * so the migrate job is not asked for the server's settings. Any other failure is a bug and
 * is thrown.
 */
export async function loadConfigOrReport<S extends Record<string, ConfigSlice<unknown>>>(
  slices: S,
  env: Env = process.env,
  writeError: (text: string) => void = (text) => process.stderr.write(text),
): Promise<{ [K in keyof S]: ConfigOf<S[K]> } | undefined> {
  try {
    return await checkSlices(slices, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    writeError(
      err.problems.length === 1
        ? `configuration error: ${err.problems[0]}\n`
        : `configuration error (${err.problems.length} problems):\n${err.problems.map((p) => `  - ${p}\n`).join('')}`,
    );
    return undefined;
  }
}
