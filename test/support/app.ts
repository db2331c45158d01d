import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { APP_OPTIONS, configureApp, createHttpAdapter } from '../../src/app.factory.js';
import { AppModule, AppModuleOptions } from '../../src/app.module.js';
import type { DestinationStream } from 'pino';
import { AppLogger } from '../../src/logging/app-logger.js';
import { createAppLogger } from '../../src/logging/logging.module.js';
import { Clock } from '../../src/time/clock.js';
import type { TestDatabase } from './databases.js';

/** A controllable clock for tests. */
export class FakeClock extends Clock {
  constructor(public current = new Date('2026-11-22T12:00:00Z')) {
    super();
  }
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(date: Date | string): void {
    this.current = new Date(date);
  }
}

/**
 * The production application (same module, global providers and app settings as main.ts),
 * built with @nestjs/testing against a test database. With `logTo`, the process's logger (at the
 * configuration's LOG_LEVEL) writes its lines there instead of stdout.
 */
export async function startTestApp(
  db: TestDatabase,
  options: Omit<AppModuleOptions, 'config'> & {
    env?: Record<string, string>;
    imports?: Type[];
    logTo?: DestinationStream;
  } = {},
): Promise<NestExpressApplication> {
  const config = db.config(options.env);
  const builder = Test.createTestingModule({
    imports: [AppModule.forRoot({ ...options, config }), ...(options.imports ?? [])],
  });
  if (options.logTo) builder.overrideProvider(AppLogger).useValue(await createAppLogger(config.logging, options.logTo));
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>(createHttpAdapter(), {
    ...APP_OPTIONS,
    logger: false,
  });
  configureApp(app, { ...options, config });
  await app.init();
  return app;
}

// The client's tests (clients/typescript/test) issue their keys through this module.
export { issueApiKey } from './api-keys.js';
