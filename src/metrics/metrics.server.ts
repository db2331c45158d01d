import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { ApiError, ErrorBody } from '../errors/api-error.js';
import { stringifyJson } from '../json/json-codec.js';
import { REQUEST_ID_HEADER, requestIdFor } from '../http/request-id.js';
import { metricsConfig, type MetricsConfig } from '../config/metrics.config.js';
import { exposureWarning } from '../config/listen-address.js';
import { runtimeConfig, type RuntimeConfig } from '../config/runtime.config.js';
import { serverConfig, type ServerConfig } from '../config/server.config.js';
import { checkMetricsToken, digest } from './metrics-token.guard.js';
import { MetricsService } from './metrics.service.js';

/**
 * With METRICS_PORT, /metrics is served by a small listener of its own on that port (and not
 * on PORT), so the operator can keep it on the internal network while the API is public.
 * It answers GET and HEAD /metrics only (METRICS_TOKEN still applies when set); anything else
 * gets the usual Error body. Plain node:http: one route needs neither Nest nor Express.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: Server;
  private readonly expected?: Buffer;

  constructor(
    @Inject(metricsConfig.token) private readonly config: MetricsConfig,
    /** The app server's timeouts, which this listener shares. */
    @Inject(serverConfig.token) private readonly http: ServerConfig,
    @Inject(runtimeConfig.token) private readonly runtime: RuntimeConfig,
    private readonly metrics: MetricsService,
  ) {
    if (config.metricsToken) this.expected = digest(config.metricsToken);
  }

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.metricsPort;
    if (port === undefined) return;
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = this.http.keepAliveTimeoutMs;
    server.headersTimeout = this.http.headersTimeoutMs;
    server.requestTimeout = this.http.requestTimeoutMs;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.config.metricsHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`metrics on http://${this.config.metricsHost}:${port}/metrics`);
    const what = this.expected
      ? "/metrics (behind METRICS_TOKEN): the service's traffic, errors and process state"
      : "/metrics, without a token: the service's traffic, errors and process state";
    const exposed = exposureWarning(this.runtime.nodeEnv, 'METRICS_HOST', this.config.metricsHost, port, what);
    if (exposed !== undefined) this.logger.warn(exposed);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const path = (req.url ?? '/').split('?', 1)[0];
      if (path !== '/metrics') throw new ApiError('route_not_found', 'Only /metrics is served on this port.');
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        throw new ApiError('method_not_allowed', '/metrics answers GET and HEAD only.', {
          headers: { Allow: 'GET, HEAD' },
        });
      }
      checkMetricsToken(req.headers.authorization, this.expected);
      const text = await this.metrics.render();
      res.writeHead(200, { 'Content-Type': this.metrics.contentType, 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
    } catch (err) {
      const error =
        err instanceof ApiError ? err : new ApiError('internal_error', 'The metrics could not be rendered.');
      if (!(err instanceof ApiError)) this.logger.error(err);
      const requestId = requestIdFor(req);
      const body: ErrorBody = error.toBody(requestId);
      res.writeHead(error.status, {
        'Content-Type': 'application/json; charset=utf-8',
        [REQUEST_ID_HEADER]: requestId,
        ...error.headers,
      });
      res.end(stringifyJson(body));
    }
  }
}
