/**
 * Readers of environment variables shared by the configuration slices. A bad value does not
 * stop the load: the reader records a problem naming the variable and returns the fallback, so
 * one start reports every bad value at once (ConfigError lists them all).
 */
export type Env = Record<string, string | undefined>;

/** Every problem of one load: each says which variable to fix and how. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(
      problems.length === 1
        ? problems[0]
        : `${problems.length} problems:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
  }
}

/** The environment one load reads, and the problems found in it so far. */
export class Reader {
  readonly problems: string[] = [];
  private readonly bad = new Set<string>();

  constructor(private readonly vars: Env) {}

  /** The variable's value as given (undefined when unset). */
  raw(name: string): string | undefined {
    return this.vars[name];
  }

  /** Records a problem with the variables named (their later checks are skipped). */
  problem(message: string, ...names: string[]): void {
    this.problems.push(message);
    for (const name of names) this.bad.add(name);
  }

  /** Whether none of the named variables has a problem, so a rule that spans them can be checked. */
  ok(...names: string[]): boolean {
    return names.every((name) => !this.bad.has(name));
  }
}

export function str(env: Reader, name: string, fallback: string): string {
  const v = env.raw(name);
  return v === undefined || v === '' ? fallback : v;
}

/** A variable's value, or undefined when unset or empty. */
export function optional(env: Reader, name: string): string | undefined {
  const v = env.raw(name);
  return v === undefined || v === '' ? undefined : v;
}

export function int(env: Reader, name: string, fallback: number, min: number, max: number): number {
  const raw = env.raw(name);
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) {
    env.problem(`${name} must be a whole number, got "${raw.slice(0, 100)}"`, name);
    return fallback;
  }
  const n = Number(raw);
  if (n < min || n > max) {
    env.problem(`${name} must be between ${min} and ${max}, got ${n}`, name);
    return fallback;
  }
  return n;
}

export function oneOf<T extends string>(env: Reader, name: string, allowed: readonly T[], fallback: T): T {
  const raw = str(env, name, fallback);
  if (!(allowed as readonly string[]).includes(raw)) {
    env.problem(`${name} must be one of ${allowed.join(', ')}, got "${raw.slice(0, 100)}"`, name);
    return fallback;
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

/** A URL with one of `protocols`; undefined when unset, or when it is bad (a problem is recorded). */
export function url(env: Reader, name: string, protocols: string[], fallback?: string): string | undefined {
  const given = env.raw(name);
  const raw = given === '' ? undefined : (given ?? fallback);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    // The value may hold a password: never repeated as given.
    env.problem(`${name} must be a URL, got "${redactUrl(raw)}"`, name);
    return undefined;
  }
  if (!protocols.includes(parsed.protocol)) {
    env.problem(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`, name);
    return undefined;
  }
  return raw;
}
