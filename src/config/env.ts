/**
 * Readers of environment variables shared by the configuration slices. Each names the variable
 * in its error, so a bad value stops the process with a message that says what to fix.
 */
export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

export function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

/** A variable's value, or undefined when unset or empty. */
export function optional(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = str(env, name, fallback);
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/**
 * A URL fit for a message or a log: whatever precedes its last `@` after the scheme (the
 * userinfo: user name and password) is replaced, whether or not the rest parses; a password may
 * itself hold characters that break parsing, so the URL parser is not relied on to find it.
 */
export function redactUrl(raw: string): string {
  const at = raw.lastIndexOf('@');
  if (at === -1) return raw;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(raw)?.[0] ?? '';
  return `${scheme}***@${raw.slice(at + 1)}`;
}

export function url(env: Env, name: string, protocols: string[], fallback?: string): string | undefined {
  const raw = env[name] === '' ? undefined : (env[name] ?? fallback);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    // The value may hold a password: never repeated as given.
    throw new ConfigError(`${name} must be a URL, got "${redactUrl(raw)}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}
