import { AppConfig, ConfigError, loadConfig } from './config.js';

/** EX_CONFIG of sysexits(3): what every entry point exits with when its configuration is wrong. */
export const EX_CONFIG = 78;

/**
 * The configuration of an entry point (server, migrate command, key tool), or undefined once a
 * configuration error was written to `writeError` as `configuration error: …`: the caller then
 * ends with EX_CONFIG, each in its own way (exit, or returning the code to a test). Any other
 * failure to load is a bug and is thrown.
 */
export function loadConfigOrReport(
  env: Record<string, string | undefined> = process.env,
  writeError: (text: string) => void = (text) => process.stderr.write(text),
): AppConfig | undefined {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    writeError(`configuration error: ${err.message}\n`);
    return undefined;
  }
}
