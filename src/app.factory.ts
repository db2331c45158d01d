import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Server } from 'node:http';
import { AppModule, AppModuleOptions } from './app.module.js';
import { FinishedRequests } from './http/finished-requests.js';
import { applyHttpEdge, corsOptions, requestEdge, testDelayMiddleware } from './http/http-edge.js';
import { JsonExpressAdapter } from './http/json-express.adapter.js';
import { recordedContext, requestIp } from './request-context/request-context.js';
import { routeTemplate } from './http/route-template.js';
import { loadConfig } from './config/config.js';
import { ShutdownService } from './lifecycle/shutdown.service.js';
import { AppLogger, type AccessRecord } from './logging/app-logger.js';
import { MetricsService } from './metrics/metrics.service.js';
import { documentedOrigins, mountOpenApi } from './openapi/openapi.js';
import { endRequestSpan } from './tracing/tracing.js';

/**
 * Settings of the HTTP application that are not Nest providers: the same function serves
 * main.ts and the HTTP tests, so they never run different stacks.
 */
export function configureApp(app: INestApplication, options: AppModuleOptions): void {
  const config = options.config ?? loadConfig();
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.server.trustProxy);
  // Every log of the process goes through pino: JSON lines, pretty in development.
  const logger = app.get(AppLogger);
  app.useLogger(logger.nest());
  // The HTTP edge (applyHttpEdge, the admin listener's too), first on every request: its id,
  // its head's limits, security headers, and once it is over, its access log line and metrics
  // (one middleware, one listener); then CORS. The listener only notes what the
  // line and the histogram need; both are written in batches (FinishedRequests), applied before
  // each scrape of /metrics and when the listener closes at shutdown.
  const metrics = app.get(MetricsService);
  const finished = new FinishedRequests<AccessRecord>((batch) => {
    for (const record of batch) {
      metrics.observeRequest(record.method, record.route, record.status, record.durationMs / 1000);
      logger.access(record);
    }
  });
  metrics.beforeScrape(() => finished.flush());
  (app.getHttpServer() as Server).on('close', () => finished.flush());
  const server = applyHttpEdge(
    app,
    config.server,
    requestEdge(
      () => metrics.requestStarted(),
      (req, res, durationMs) => {
        metrics.requestEnded();
        const recorded = recordedContext(req);
        if (recorded?.databaseError) metrics.databaseError(recorded.databaseError);
        const route = routeTemplate(req);
        const status = res.writableFinished ? res.statusCode : undefined;
        const keyId = recorded?.admission?.principal?.keyId;
        if (recorded?.span) endRequestSpan(recorded.span, req.method, route, status, keyId);
        finished.add({
          requestId: req.id as string,
          traceId: recorded?.span?.spanContext().traceId,
          method: req.method,
          route,
          url: req.originalUrl ?? req.url,
          status,
          durationMs: Math.round(durationMs * 100) / 100,
          ip: requestIp(req),
          keyId,
          endedAt: Date.now(),
        });
      },
      { docsConnectOrigins: documentedOrigins(config.publicUrls) },
    ),
    logger,
  );
  if (config.cors.corsOrigins.length > 0) app.enableCors(corsOptions(config.cors));
  if (config.server.testDelayHeader) app.use(testDelayMiddleware());
  // Requests are tracked for the shutdown drain.
  app.get(ShutdownService).attach(server);
  mountOpenApi(app, config.publicUrls);
  // Signals are handled by main.ts (onShutdownSignals): drain first, then close the app.
}

/** The HTTP adapter of the application (also the HTTP tests'): Express, answering in lossless JSON. */
export function createHttpAdapter(): JsonExpressAdapter {
  return new JsonExpressAdapter();
}

/** Options of the Nest application, shared with the HTTP tests' TestingModule. */
export const APP_OPTIONS = {
  // Bodies are read by JsonBodyInterceptor (@JsonBody()), losslessly and after the guards.
  bodyParser: false,
} as const;

export async function createApp(options: AppModuleOptions = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(options), createHttpAdapter(), {
    ...APP_OPTIONS,
    bufferLogs: true,
  });
  configureApp(app, options);
  return app;
}
