import type { Env } from './env.js';

/** Reads another slice from the same load (a rule that spans slices, or a default taken from one). */
export type UseSlice = <U>(slice: ConfigSlice<U>) => U;

/**
 * One concern's configuration: a loader that reads and validates its variables, and the token
 * its consumers inject it by (`@Inject(rateLimitConfig.token) config: RateLimitConfig`).
 */
export interface ConfigSlice<T> {
  readonly name: string;
  readonly token: symbol;
  readonly load: (env: Env, use: UseSlice) => T;
}

/** The type a slice loads to. */
export type ConfigOf<S> = S extends ConfigSlice<infer T> ? T : never;

export function defineConfig<T>(name: string, load: (env: Env, use: UseSlice) => T): ConfigSlice<T> {
  return { name, token: Symbol(`config:${name}`), load };
}

/**
 * Loads every slice given, each once: a slice another one uses is loaded on first use and the
 * same value is handed to both. The first bad value throws its ConfigError.
 */
export function loadSlices<S extends Record<string, ConfigSlice<unknown>>>(
  slices: S,
  env: Env,
): { [K in keyof S]: ConfigOf<S[K]> } {
  const loaded = new Map<ConfigSlice<unknown>, unknown>();
  const loading = new Set<ConfigSlice<unknown>>();
  const use: UseSlice = <U>(slice: ConfigSlice<U>): U => {
    if (loaded.has(slice)) return loaded.get(slice) as U;
    // A programming error, not a bad value: plain Error, so it is never reported as configuration.
    if (loading.has(slice)) throw new Error(`configuration slice "${slice.name}" uses itself through another slice`);
    loading.add(slice);
    const value = slice.load(env, use);
    loaded.set(slice, value);
    return value;
  };
  return Object.fromEntries(Object.entries(slices).map(([key, slice]) => [key, use(slice)])) as {
    [K in keyof S]: ConfigOf<S[K]>;
  };
}

/** One slice (and the slices it uses), e.g. for a test of that slice alone. */
export function loadSlice<T>(slice: ConfigSlice<T>, env: Env): T {
  return loadSlices({ slice }, env).slice as T;
}
