import type { Reader } from './env.js';

/**
 * Passwords anyone can read in this repository: docker-compose.yml's defaults (`REPLACE-ME-…`)
 * and the database passwords its earlier examples showed. NODE_ENV=production refuses them.
 */
const PUBLIC_PASSWORDS = new Set(['animal', 'animal_app']);
const PLACEHOLDER_PREFIX = 'REPLACE-ME';

/** The compose stack's own variable that fills each URL's password, named in the message. */
const COMPOSE_VARIABLE: Record<string, string> = {
  DATABASE_URL: 'APP_DB_PASSWORD',
  DIRECT_URL: 'POSTGRES_PASSWORD',
  REDIS_URL: 'REDIS_PASSWORD',
};

/** Whether `password` is public: a placeholder of the compose file or an example's value. */
export function isPublicPassword(password: string): boolean {
  return password.startsWith(PLACEHOLDER_PREFIX) || PUBLIC_PASSWORDS.has(password);
}

/**
 * Records a problem when the password in `value` (the URL read as `name`) is public and
 * `production` holds; never repeats the password.
 */
export function refusePublicPassword(env: Reader, name: string, value: string | undefined, production: boolean): void {
  if (!production || value === undefined) return;
  let password: string;
  try {
    password = decodeURIComponent(new URL(value).password);
  } catch {
    return; // a bad URL is reported by its reader
  }
  if (password === '' || !isPublicPassword(password)) return;
  const compose = COMPOSE_VARIABLE[name];
  env.problem(
    `${name} holds a public placeholder password, which NODE_ENV=production refuses` +
      (compose ? ` (in the compose stack set ${compose} in .env)` : '') +
      ': generate one with `openssl rand -hex 24`',
    name,
  );
}
