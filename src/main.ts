import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { CONFIG_SLICES } from './config/config.js';
import { EX_CONFIG, loadConfigOrReport } from './config/exit-on-config-error.js';
import { onShutdownSignals } from './lifecycle/graceful-shutdown.js';

async function bootstrap(): Promise<void> {
  // Every slice, checked before the app is built: nothing is opened, printed or listened on
  // until the whole configuration is valid.
  const config = await loadConfigOrReport(CONFIG_SLICES);
  if (!config) process.exit(EX_CONFIG);
  // The app's modules are loaded only now: a refused configuration is answered without them.
  const { createApp } = await import('./app.factory.js');
  const app = await createApp({ config });
  onShutdownSignals(app, config.shutdown);
  const { host, port } = config.server;
  await app.listen(port, host);
  new Logger('Main').log(
    `Animal Store API listening on http://${host}:${port} (public base ${config.publicUrls.publicBaseUrl})`,
  );
}

bootstrap().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
