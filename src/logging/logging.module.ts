import { Global, Module } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import type { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppLogger, prettyStream, stdoutStream } from './app-logger.js';

/** The logger for a configuration; `destination` replaces stdout (tests). */
export async function createAppLogger(config: AppConfig, destination?: DestinationStream): Promise<AppLogger> {
  const wantsPretty = config.nodeEnv === 'development' && !destination;
  const pretty = wantsPretty ? await prettyStream() : undefined;
  return new AppLogger({ level: config.logLevel, pretty: pretty !== undefined }, destination ?? pretty ?? stdoutStream());
}

/**
 * Structured logs: JSON lines on stdout (pretty in development), one access line per request
 * (written by the request edge, src/http/http-edge.ts) and every log of the process:
 * configureApp makes Nest's Logger write through AppLogger.
 */
@Global()
@Module({
  providers: [{ provide: AppLogger, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createAppLogger(config) }],
  exports: [AppLogger],
})
export class LoggingModule {}
