// The application on a PostgreSQL test database that it reaches through a TcpProxy, so that a
// test can take the database away (`proxy.stop()`, `freeze()`) and bring it back.
import type { NestExpressApplication } from '@nestjs/platform-express';
import { startTestApp } from './app.js';
import { createTestDatabase, TestDatabase } from './databases.js';
import { TcpProxy } from './tcp-proxy.js';

export interface AppBehindProxy {
  db: TestDatabase;
  proxy: TcpProxy;
  app: NestExpressApplication;
  /** Closes the app, stops the proxy and drops the database. */
  close(): Promise<void>;
}

/**
 * A new PostgreSQL test database and the app on it through a proxy; `options` as startTestApp's,
 * with DB_CONNECT_TIMEOUT_MS 500 unless its `env` says otherwise (an unreachable database is
 * noticed quickly). What was started is stopped again when a later step fails.
 */
export async function startAppBehindProxy(
  options: NonNullable<Parameters<typeof startTestApp>[1]> = {},
): Promise<AppBehindProxy> {
  const db = await createTestDatabase('postgres');
  let proxy: TcpProxy | undefined;
  try {
    const proxied = await TcpProxy.forDatabase(db.env.DATABASE_URL);
    proxy = proxied.proxy;
    const app = await startTestApp(db, {
      ...options,
      env: { DATABASE_URL: proxied.url, DB_CONNECT_TIMEOUT_MS: '500', ...options.env },
    });
    const started = proxy;
    return {
      db,
      proxy: started,
      app,
      async close() {
        await app.close();
        await started.stop();
        await db.drop();
      },
    };
  } catch (error) {
    await proxy?.stop();
    await db.drop();
    throw error;
  }
}
