import { AppConfig, CONFIG_SLICES, ConfigError } from './config.js';
import { loadSlices, type ConfigOf, type ConfigSlice } from './define-config.js';

/** EX_CONFIG of sysexits(3): what every entry point exits with when its configuration is wrong. */
export const EX_CONFIG = 78;

/**
 * The slices an entry point uses, loaded from `env`, or undefined once a configuration error
 * was written to `writeError` as `configuration error: …`: the caller then ends with
 * EX_CONFIG, each in its own way (exit, or returning the code to a test). Only the given slices
 * (and those they use) are read, so the migrate job is not asked for the server's settings.
 * Any other failure to load is a bug and is thrown.
 */
export function loadSlicesOrReport<S extends Record<string, ConfigSlice<unknown>>>(
  slices: S,
  env: Record<string, string | undefined> = process.env,
  writeError: (text: string) => void = (text) => process.stderr.write(text),
): { [K in keyof S]: ConfigOf<S[K]> } | undefined {
  try {
    return loadSlices(slices, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    writeError(`configuration error: ${err.message}\n`);
    return undefined;
  }
}

/** The server's whole configuration (every slice), or undefined once the error was reported. */
export function loadConfigOrReport(
  env: Record<string, string | undefined> = process.env,
  writeError?: (text: string) => void,
): AppConfig | undefined {
  return loadSlicesOrReport(CONFIG_SLICES, env, writeError);
}
