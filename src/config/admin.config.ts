import { defineConfig, type ConfigOf } from './define-config.js';
import { int, oneOf, optional } from './env.js';
import { checkListenHost, checkOwnPort, listenHostShape } from './listen-address.js';
import { metricsConfig } from './metrics.config.js';
import { serverConfig } from './server.config.js';

/**
 * The admin API's listener (docs/admin-api.md) and its console (docs/admin-console.md): off unless
 * ADMIN_PORT is set, on loopback unless ADMIN_HOST opens it, never on PORT or METRICS_PORT; the
 * console's session lifetimes and cookie. Its start-up check resolves ADMIN_HOST when the listener
 * is on.
 */
export const adminConfig = defineConfig(
  'admin',
  (env, use) => {
    const { port } = use(serverConfig);
    const { metricsPort } = use(metricsConfig);
    // 0 asks the system for a free port (tests); the listener logs the one it got.
    const adminPort = optional(env, 'ADMIN_PORT') === undefined ? undefined : int(env, 'ADMIN_PORT', 0, 0, 65535);
    checkOwnPort(env, { name: 'ADMIN_PORT', port: adminPort }, [
      { name: 'PORT', port },
      { name: 'METRICS_PORT', port: metricsPort },
    ]);
    return {
      /** Serve the admin API on this port (a listener of its own); undefined: no admin API. */
      adminPort,
      /** Interface the admin listener binds: loopback unless the operator opens it. */
      adminHost: listenHostShape(env, 'ADMIN_HOST', optional(env, 'ADMIN_HOST') ?? '127.0.0.1'),
      /** A console session ends after this many minutes without a request. */
      adminSessionIdleMinutes: int(env, 'ADMIN_SESSION_IDLE_MINUTES', 30, 1, 1440),
      /** And this many hours after sign-in, however busy. */
      adminSessionMaxHours: int(env, 'ADMIN_SESSION_MAX_HOURS', 12, 1, 720),
      /**
       * The session cookie carries Secure (sent over HTTPS only). Set it when the listener is
       * reached through TLS (a proxy in front); a request over TLS to the listener itself gets it anyway.
       */
      adminCookieSecure: oneOf(env, 'ADMIN_COOKIE_SECURE', ['true', 'false'] as const, 'false') === 'true',
    };
  },
  async (admin, env) => {
    if (admin.adminPort !== undefined && env.ok('ADMIN_HOST')) {
      await checkListenHost(env, 'ADMIN_HOST', admin.adminHost);
    }
  },
);

export type AdminConfig = ConfigOf<typeof adminConfig>;
