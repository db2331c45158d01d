import { isIP } from 'node:net';
import { defineConfig, type ConfigOf } from './define-config.js';
import { int, optional, type Reader } from './env.js';
import { checkListenHost } from './listen-address.js';
import { serverConfig } from './server.config.js';

/**
 * The admin API's listener (docs/admin-api.md): off unless ADMIN_PORT is set, on loopback unless
 * ADMIN_HOST opens it, never on PORT. Its start-up check resolves ADMIN_HOST when the listener
 * is on.
 */
export const adminConfig = defineConfig(
  'admin',
  (env, use) => {
    const { port } = use(serverConfig);
    // 0 asks the system for a free port (tests); the listener logs the one it got.
    const adminPort = optional(env, 'ADMIN_PORT') === undefined ? undefined : int(env, 'ADMIN_PORT', 0, 0, 65535);
    if (adminPort !== undefined && adminPort !== 0 && adminPort === port && env.ok('ADMIN_PORT', 'PORT')) {
      env.problem(
        `ADMIN_PORT must differ from PORT (${port}): the admin API is never served on the public port`,
        'ADMIN_PORT',
      );
    }
    return {
      /** Serve the admin API on this port (a listener of its own); undefined: no admin API. */
      adminPort,
      /** Interface the admin listener binds: loopback unless the operator opens it. */
      adminHost: host(env, optional(env, 'ADMIN_HOST') ?? '127.0.0.1'),
    };
  },
  async (admin, env) => {
    if (admin.adminPort !== undefined && env.ok('ADMIN_HOST')) {
      await checkListenHost(env, 'ADMIN_HOST', admin.adminHost);
    }
  },
);

function host(env: Reader, value: string): string {
  if (isIP(value) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(value)) {
    env.problem(
      `ADMIN_HOST must be an IP address or a host name to listen on, got "${value.slice(0, 100)}"`,
      'ADMIN_HOST',
    );
    return '127.0.0.1';
  }
  return value;
}

export type AdminConfig = ConfigOf<typeof adminConfig>;
