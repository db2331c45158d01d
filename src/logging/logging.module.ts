import { Global, Module } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { loggingConfig, type LoggingConfig } from '../config/logging.config.js';
import { AppLogger, prettyStream, stdoutStream } from './app-logger.js';

/** The logger for a configuration; `destination` replaces stdout (tests). */
export async function createAppLogger(config: LoggingConfig, destination?: DestinationStream): Promise<AppLogger> {
  const wantsPretty = config.nodeEnv === 'development' && !destination;
  const pretty = wantsPretty ? await prettyStream() : undefined;
  return new AppLogger(
    { level: config.logLevel, pretty: pretty !== undefined },
    destination ?? pretty ?? stdoutStream(),
  );
}

/**
 * Structured logs: JSON lines on stdout (pretty in development), one access line per request
 * (reported by the request edge, src/http/http-edge.ts, and written by configureApp) and every
 * log of the process: configureApp makes Nest's Logger write through AppLogger.
 */
@Global()
@Module({
  providers: [
    {
      provide: AppLogger,
      inject: [loggingConfig.token],
      useFactory: (config: LoggingConfig) => createAppLogger(config),
    },
  ],
  exports: [AppLogger],
})
export class LoggingModule {}
