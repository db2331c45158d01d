import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { APP_OPTIONS, configureApp, createHttpAdapter } from '../../src/app.factory.js';
import { ApiKeysService, NewApiKey } from '../../src/auth/api-keys.service.js';
import { AppModule, AppModuleOptions } from '../../src/app.module.js';
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
 * built with @nestjs/testing against a test database.
 */
export async function startTestApp(
  db: TestDatabase,
  options: Omit<AppModuleOptions, 'config'> & { env?: Record<string, string>; imports?: Type[] } = {},
): Promise<NestExpressApplication> {
  const config = db.config(options.env);
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forRoot({ ...options, config }), ...(options.imports ?? [])],
  }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>(createHttpAdapter(), { ...APP_OPTIONS, logger: false });
  configureApp(app, { ...options, config });
  await app.init();
  return app;
}

/**
 * Issues an API key in the app's database and returns its secret. Unless told otherwise the
 * key is enterprise with limits no test reaches, so rate limits never get in a test's way.
 */
export async function issueApiKey(app: NestExpressApplication, input: Partial<NewApiKey> = {}): Promise<string> {
  const plan = input.plan ?? 'enterprise';
  const limits = plan === 'enterprise' ? { perMinute: 1_000_000_000, perDay: 2_000_000_000 } : {};
  const { key } = await app.get(ApiKeysService).create({ name: 'test key', plan, ...limits, ...input });
  return key;
}
