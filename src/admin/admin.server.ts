import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { AdminSessionsService } from '../admin-sessions/admin-sessions.service.js';
import { AdminTokensService } from '../admin-tokens/admin-tokens.service.js';
import { UsageService } from '../usage/usage.service.js';
import { WebhooksService } from '../webhooks/webhooks.service.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { AuditLogService } from '../audit/audit-log.service.js';
import { adminConfig, type AdminConfig } from '../config/admin.config.js';
import { exposureWarning } from '../config/listen-address.js';
import { runtimeConfig, type RuntimeConfig } from '../config/runtime.config.js';
import { serverConfig, type ServerConfig } from '../config/server.config.js';
import { applyHttpEdge, requestEdge } from '../http/http-edge.js';
import { JsonExpressAdapter } from '../http/json-express.adapter.js';
import { routeTemplate } from '../http/route-template.js';
import { AppLogger } from '../logging/app-logger.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { recordedContext } from '../request-context/request-context.js';
import { Clock } from '../time/clock.js';
import { AdminApiModule } from './admin-api.module.js';
import { AdminOpenApiController, buildAdminOpenApiDocument } from './admin-openapi.js';
import { adminListenerHeaders } from './console/console-headers.js';

/**
 * The admin API's listener (docs/admin-api.md). With ADMIN_PORT set, a second Nest application
 * (AdminApiModule, its own Express instance and its own guard) listens on ADMIN_HOST:ADMIN_PORT
 * and calls this application's own service instances, so both doors share the database, the
 * operations and the key cache's invalidation. The public application's middleware, guards and
 * routes stay as they are: its request path does not know this listener exists. Without
 * ADMIN_PORT nothing is built.
 */
@Injectable()
export class AdminServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Admin');
  private app?: NestExpressApplication;

  constructor(
    @Inject(adminConfig.token) private readonly config: AdminConfig,
    @Inject(serverConfig.token) private readonly http: ServerConfig,
    @Inject(runtimeConfig.token) private readonly runtime: RuntimeConfig,
    private readonly keys: ApiKeysService,
    private readonly tokens: AdminTokensService,
    private readonly sessions: AdminSessionsService,
    private readonly audit: AuditLogService,
    private readonly usage: UsageService,
    private readonly webhooks: WebhooksService,
    private readonly appLogger: AppLogger,
    private readonly metrics: MetricsService,
    private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.adminPort;
    if (port === undefined) return;
    const app = await NestFactory.create<NestExpressApplication>(
      AdminApiModule.forRoot({
        keys: this.keys,
        tokens: this.tokens,
        sessions: this.sessions,
        config: this.config,
        audit: this.audit,
        usage: this.usage,
        webhooks: this.webhooks,
        logger: this.appLogger,
        clock: this.clock,
      }),
      new JsonExpressAdapter(),
      { bodyParser: false, logger: false },
    );
    app.useLogger(this.appLogger.nest());
    // The public listener's HTTP edge (framing, head limits, server settings, Node's refusals
    // answered with the Error body), with this listener's headers and reports.
    applyHttpEdge(app, this.http, this.edge(), this.appLogger);
    await app.init();
    app.get(AdminOpenApiController).use(buildAdminOpenApiDocument(app));
    await app.listen(port, this.config.adminHost);
    this.app = app;
    this.logger.log(`admin API on http://${this.config.adminHost}:${this.port()}/admin/v1, console on /admin/`);
    const exposed = exposureWarning(
      this.runtime.nodeEnv,
      'ADMIN_HOST',
      this.config.adminHost,
      this.port() as number,
      'the admin API (issuing, changing and revoking API keys, behind admin tokens)',
    );
    if (exposed !== undefined) this.logger.warn(exposed);
  }

  /** The port the admin listener is bound to (the system's choice with ADMIN_PORT=0); undefined when off. */
  port(): number | undefined {
    const address = (this.app?.getHttpServer() as Server | undefined)?.address();
    return address && typeof address === 'object' ? (address as AddressInfo).port : undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    const app = this.app;
    if (!app) return;
    this.app = undefined;
    (app.getHttpServer() as Server).closeAllConnections();
    await app.close();
  }

  /**
   * First on every admin request: the public API's requestEdge (its id, its head's limits), the
   * API's security headers (the console's policy on its pages) with no-store on every path, no trace span, and once it is over its
   * access line, with the admin token's name as `actor`, and admin_requests_total.
   */
  private edge() {
    return requestEdge(
      () => {},
      (req, res, durationMs) => {
        const route = routeTemplate(req);
        const status = res.writableFinished ? res.statusCode : undefined;
        this.metrics.adminRequestFinished(req.method, route, status ?? 499);
        this.appLogger.access({
          requestId: req.id as string,
          method: req.method,
          route,
          url: req.originalUrl ?? req.url,
          status,
          durationMs: Math.round(durationMs * 100) / 100,
          ip: req.ip,
          keyId: undefined,
          actor: recordedContext(req)?.adminActor,
        });
      },
      { headers: adminListenerHeaders(), trace: false },
    );
  }
}
