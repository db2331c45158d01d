import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule, AppModuleOptions } from './app.module.js';
import { loadConfig } from './config/config.js';
import { mountOpenApi } from './openapi/openapi.js';

/**
 * Settings of the HTTP application that are not Nest providers: the same function serves
 * main.ts and the HTTP tests, so they never run different stacks.
 */
export function configureApp(app: INestApplication, options: AppModuleOptions): void {
  const config = options.config ?? loadConfig();
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.trustProxy);
  express.disable('x-powered-by');
  express.set('etag', false);
  mountOpenApi(app, config);
  app.enableShutdownHooks();
}

export async function createApp(options: AppModuleOptions = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(options), {
    // Bodies are read by JsonBodyInterceptor, losslessly and after the guards.
    bodyParser: false,
    bufferLogs: true,
  });
  configureApp(app, options);
  return app;
}
