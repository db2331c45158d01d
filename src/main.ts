import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app.factory.js';
import { ConfigError, loadConfig } from './config/config.js';
import { onShutdownSignals } from './lifecycle/graceful-shutdown.js';

async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const app = await createApp({ config });
  onShutdownSignals(app, config.shutdown);
  const { host, port } = config.server;
  await app.listen(port, host);
  new Logger('Main').log(`Animal Store API listening on http://${host}:${port} (public base ${config.publicUrls.publicBaseUrl})`);
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
