import { ConfigError, Reader, type Env } from './env.js';

/** Reads another slice from the same load (a rule that spans slices, or a default taken from one). */
export type UseSlice = <U>(slice: ConfigSlice<U>) => U;

/**
 * A check of a loaded slice that needs I/O (a host name resolved, a directory created): it
 * records its problems with `env.problem` (skipping variables that already have one) and resolves
 * once done, within a bounded time.
 */
export type SliceCheck<T> = (value: T, env: Reader) => Promise<void>;

/**
 * One concern's configuration: a loader that reads and validates its variables, and the token
 * its consumers inject it by (`@Inject(rateLimitConfig.token) config: RateLimitConfig`); `check`,
 * when given, is what the entry points run before they act (checkSlices).
 */
export interface ConfigSlice<T> {
  readonly name: string;
  readonly token: symbol;
  readonly load: (env: Reader, use: UseSlice) => T;
  // A method, so a slice of any value type is a ConfigSlice<unknown> (methods are bivariant).
  check?(value: T, env: Reader): Promise<void>;
}

/** The type a slice loads to. */
export type ConfigOf<S> = S extends ConfigSlice<infer T> ? T : never;

type Loaded<S extends Record<string, ConfigSlice<unknown>>> = { [K in keyof S]: ConfigOf<S[K]> };

export function defineConfig<T>(
  name: string,
  load: (env: Reader, use: UseSlice) => T,
  check?: SliceCheck<T>,
): ConfigSlice<T> {
  return { name, token: Symbol(`config:${name}`), load, check };
}

/**
 * Loads every slice given, each once: a slice another one uses is loaded on first use and the
 * same value is handed to both. Returns the values with every slice loaded and the reader that
 * holds the problems found.
 */
function readSlices<S extends Record<string, ConfigSlice<unknown>>>(
  slices: S,
  env: Reader,
): { config: Loaded<S>; used: Map<ConfigSlice<unknown>, unknown> } {
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
  const config = Object.fromEntries(Object.entries(slices).map(([key, slice]) => [key, use(slice)])) as Loaded<S>;
  return { config, used: loaded };
}

/**
 * Loads every slice given (and those they use) without I/O; every bad value is reported at once
 * in one ConfigError. For tests and tools that need no start-up checks.
 */
export function loadSlices<S extends Record<string, ConfigSlice<unknown>>>(slices: S, env: Env): Loaded<S> {
  const reader = new Reader(env);
  const { config } = readSlices(slices, reader);
  if (reader.problems.length > 0) throw new ConfigError(reader.problems);
  return config;
}

/**
 * What an entry point runs before it acts: loads the slices it uses, then runs their checks
 * that need I/O (side by side, each bounded), and rejects with one ConfigError listing every
 * problem found by either.
 */
export async function checkSlices<S extends Record<string, ConfigSlice<unknown>>>(
  slices: S,
  env: Env,
): Promise<Loaded<S>> {
  const reader = new Reader(env);
  const { config, used } = readSlices(slices, reader);
  await Promise.all(
    [...used].map(async ([slice, value]) => {
      if (slice.check) await slice.check(value, reader);
    }),
  );
  if (reader.problems.length > 0) throw new ConfigError(reader.problems);
  return config;
}

/** One slice (and the slices it uses), e.g. for a test of that slice alone. */
export function loadSlice<T>(slice: ConfigSlice<T>, env: Env): T {
  return loadSlices({ slice }, env).slice as T;
}
