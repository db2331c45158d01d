import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app.factory.js';
import { EX_CONFIG, loadConfigOrReport } from './config/exit-on-config-error.js';
import { onShutdownSignals } from './lifecycle/graceful-shutdown.js';

async function bootstrap(): Promise<void> {
  const config = loadConfigOrReport();
  if (!config) process.exit(EX_CONFIG);
  const app = await createApp({ config });
  onShutdownSignals(app, config);
  await app.listen(config.port, config.host);
  new Logger('Main').log(`Animal Store API listening on http://${config.host}:${config.port} (public base ${config.publicBaseUrl})`);
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
