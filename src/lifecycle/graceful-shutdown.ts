import { INestApplication, Logger } from '@nestjs/common';
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ShutdownConfig } from '../config/shutdown.config.js';
import { ShutdownService } from './shutdown.service.js';

/** Time allowed, after the drain, for the application's own shutdown hooks (the usage write, database, Redis). */
const CLOSE_GRACE_MS = 5000;

/**
 * SIGTERM / SIGINT handling of the server process (main.ts): readiness fails at once, the
 * listener closes after SHUTDOWN_DELAY_MS, requests in flight finish (at most
 * SHUTDOWN_TIMEOUT_MS), the application closes (its beforeApplicationShutdown hooks first: the
 * usage per key still held is written; then the database and Redis connections), and the
 * process exits 0. Nest's own enableShutdownHooks is not used: it closes the application
 * without draining first, and re-raises the signal, so the exit status is not 0.
 *
 * A second SIGINT (Ctrl-C twice) exits at once; if closing hangs past every bound the
 * process exits 1 instead of lingering until the orchestrator kills it.
 */
export function onShutdownSignals(app: INestApplication, config: ShutdownConfig): void {
  const logger = new Logger('Shutdown');
  let shuttingDown = false;

  async function shutdown(signal: NodeJS.Signals): Promise<void> {
    const state = app.get(ShutdownService);
    state.begin();
    const limit = config.shutdownDelayMs + config.shutdownTimeoutMs + CLOSE_GRACE_MS;
    setTimeout(() => {
      logger.error(`shutdown did not finish within ${limit} ms; exiting`);
      process.exit(1);
    }, limit).unref();
    logger.log(`${signal} received: readiness fails from now; closing the listener in ${config.shutdownDelayMs} ms`);
    if (config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs);
    const { abandoned, elapsedMs } = await state.drain(app.getHttpServer() as Server);
    logger.log(`HTTP server closed after ${elapsedMs} ms${abandoned > 0 ? ` (${abandoned} request(s) cut off)` : ''}`);
    await app.close();
    logger.log('shutdown complete');
    process.exit(0);
  }

  const onSignal = (signal: NodeJS.Signals): void => {
    if (shuttingDown) {
      if (signal === 'SIGINT') {
        logger.warn('SIGINT received again: exiting without waiting');
        process.exit(130);
      }
      return;
    }
    shuttingDown = true;
    shutdown(signal).catch((err: unknown) => {
      logger.error(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`, (err as Error)?.stack);
      process.exit(1);
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
