import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CorsConfig } from '../config/cors.config.js';
import type { ServerConfig } from '../config/server.config.js';
import {
  dropHeader,
  prepareHeader,
  putHeader,
  putHeaders,
  recordHeaders,
  type RecordedHeaders,
} from '../library-internals/index.js';
import { startRequestSpan, withSpan } from '../tracing/tracing.js';
import { requestContext } from '../request-context/request-context.js';
import type { AppLogger } from '../logging/app-logger.js';
import { answerClientErrors } from './client-errors.js';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id.js';
import { headRefusal, literalTarget } from './request-limits.js';
import type { ApiError } from '../errors/api-error.js';
import { stringifyJson } from '../json/json-codec.js';

/**
 * Response headers a browser client may read across origins: paging, creation, retry and
 * deprecation signals, the request id, rate limits and idempotent replays.
 */
export const CORS_EXPOSED_HEADERS = [
  'Link',
  'Location',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'Idempotent-Replayed',
];

/** CORS from CORS_ORIGINS (configureApp enables it only when the list is not empty). */
export function corsOptions(config: CorsConfig): NonNullable<Parameters<INestApplication['enableCors']>[0]> {
  return {
    origin: config.corsOrigins[0] === '*' ? '*' : config.corsOrigins,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'],
    exposedHeaders: CORS_EXPOSED_HEADERS,
    // API keys travel in Authorization, never in cookies: no credentialed requests.
    credentials: false,
    maxAge: 600,
  };
}

/**
 * Security headers (helmet). The API serves only JSON, so its Content-Security-Policy
 * allows nothing at all, and it gets only the headers that mean something on a JSON response
 * (OWASP's REST list: CSP, HSTS, nosniff, frame denial, plus referrer and resource policies);
 * the ones made for HTML documents or old browsers (COOP, Origin-Agent-Cluster, DNS prefetch,
 * IE's download and XSS filters, Flash's cross-domain policies) are left off: they would add
 * bytes to every API response for nothing. Swagger UI at /docs loads its own scripts,
 * styles and images and sends Try-it-out's requests, so it gets helmet's default policy for
 * pages instead, without upgrade-insecure-requests (which would break the page served over plain
 * HTTP locally) and with the connect-src of docsHelmetOptions.
 *
 * helmet's headers depend on its options only, never on the request (no nonces here), so each
 * policy is run once, at start, against a recording response (library-internals/helmet-recorder.ts),
 * and every request then gets the recorded headers in one loop instead of passing through
 * helmet's chain of a dozen middlewares (bench scenario listPets). helmet stays the source of
 * every header and value.
 */
export const API_HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  xFrameOptions: { action: 'deny' },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};
/**
 * The docs page's policy. Try-it-out sends its requests from the page: `connect-src` allows the
 * origin the page was served from ('self', whatever host name the browser used) and the origins
 * of the documented servers (`extraConnectOrigins`, PUBLIC_BASE_URL's and STAGING_BASE_URL's),
 * nothing else.
 */
export function docsHelmetOptions(extraConnectOrigins: readonly string[] = []): HelmetOptions {
  const connectSrc = ["'self'", ...new Set(extraConnectOrigins)];
  return { contentSecurityPolicy: { directives: { connectSrc, upgradeInsecureRequests: null } } };
}
export const DOCS_HELMET_OPTIONS: HelmetOptions = docsHelmetOptions();

/** Responses of the API are never stored by a cache: they carry rate-limit state and keyed data. */
const API_CACHE_CONTROL: [string, string] = ['Cache-Control', 'no-store'];

/** The headers every response of a path gets: the docs' policy, or the API's (with no-store under /v1). */
export interface EdgeHeaders {
  forPath(path: string): RecordedHeaders;
}

export function edgeHeaders(docsConnectOrigins: readonly string[] = []): EdgeHeaders {
  const api = recordHeaders(helmet(API_HELMET_OPTIONS));
  const v1: RecordedHeaders = { set: [...api.set, API_CACHE_CONTROL], removed: api.removed };
  const docs = recordHeaders(helmet(docsHelmetOptions(docsConnectOrigins)));
  return {
    // /v1 in any case: routing is case-sensitive, so /V1/pets is a 404, and that answer is one of
    // the API's too (no-store, like every /v1 response).
    forPath: (path) => (isUnder(path, '/v1') ? v1 : isUnder(path, '/docs') ? docs : api),
  };
}

/** The API's headers, with no-store, on every path: a listener that serves JSON only (the admin API). */
export function jsonOnlyHeaders(): EdgeHeaders {
  const api = recordHeaders(helmet(API_HELMET_OPTIONS));
  const headers: RecordedHeaders = { set: [...api.set, API_CACHE_CONTROL], removed: api.removed };
  return { forPath: () => headers };
}

/** Whether `path` is `prefix` or below it, letters compared in any case. */
function isUnder(path: string, prefix: string): boolean {
  return (
    (path.length === prefix.length || path[prefix.length] === '/') &&
    path.slice(0, prefix.length).toLowerCase() === prefix
  );
}

/**
 * Sets recorded headers on a response: checked once, then put straight into the response's
 * headers (library-internals/outgoing-headers.ts), since every response gets them (bench scenario listPets).
 */
export function applyHeaders(res: ServerResponse, headers: RecordedHeaders): void {
  const prepared = (headers.prepared ??= prepareRecorded(headers));
  for (let i = 0; i < prepared.removed.length; i++) dropHeader(res, prepared.removed[i][0], prepared.removed[i][1]);
  putHeaders(res, prepared.set);
}

function prepareRecorded(headers: RecordedHeaders): NonNullable<RecordedHeaders['prepared']> {
  return {
    set: headers.set.map(([name, value]) => prepareHeader(name, value)),
    removed: headers.removed.map((name) => [name.toLowerCase(), name]),
  };
}

/** What the edge reports when a request is over: complete, or abandoned by the client. */
export type RequestFinished = (req: Request, res: Response, durationMs: number) => void;

export interface RequestEdgeOptions {
  /** The origins Swagger UI's Try-it-out may call (the docs page's connect-src). */
  docsConnectOrigins?: readonly string[];
  /** The security headers of each path; by default edgeHeaders(docsConnectOrigins). */
  headers?: EdgeHeaders;
  /** Whether each request gets a trace span (the public API's); default true. */
  trace?: boolean;
}

/**
 * The first middleware every request passes through (CORS, when enabled, comes after it): it
 * gives the request its id (req.id, echoed in X-Request-Id, on errors too, so a client can quote
 * it), its security headers, its trace span, and one 'close' listener that reports it, with its
 * duration, to the access log and the metrics once the response is over. One middleware and one
 * listener per request whatever the number of concerns, since each costs on every request.
 *
 * It also applies the limits of a request's head (request-limits.ts): a refused head is
 * answered here, with the Error body, before any route; a path that is not valid
 * percent-encoding is taken literally, so that its request is admitted and refused by the route.
 * Every listener built on Nest (the public API, the admin API) has its own requestEdge, installed
 * by applyHttpEdge.
 */
export function requestEdge(
  onStart: () => void,
  onFinished: RequestFinished,
  { docsConnectOrigins = [], headers = edgeHeaders(docsConnectOrigins), trace = true }: RequestEdgeOptions = {},
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    const startedAt = performance.now();
    const id = requestIdFor(req);
    req.id = id;
    // A request id is a UUID or matches WELL_FORMED (request-id.ts): a valid header value.
    putHeader(res, 'x-request-id', REQUEST_ID_HEADER, id);
    applyHeaders(res, headers.forPath(req.path));
    onStart();
    res.once('close', () => onFinished(req, res, performance.now() - startedAt));
    const refusal = headRefusal(req);
    if (refusal !== undefined) return refuse(res, refusal, id);
    req.url = literalTarget(req.url);
    if (!trace) return next();
    const span = startRequestSpan(req.method, req.url, req.headers);
    if (span === undefined) return next();
    requestContext(req).span = span;
    // A sampled request's handling runs with its span active, so its queries are its children.
    if (span.isRecording()) withSpan(span, next);
    else next();
  };
}

/**
 * The HTTP edge of a listener, the same on each (docs/security.md, "Input limits"): Express's
 * settings, `edge` (a requestEdge) first on every request, and the HTTP server's settings.
 *
 * Keep-alive outlasts the balancer's idle timeout, so the balancer, not this server, closes idle
 * connections (no 502 from a race); the headers and request timeouts stop slow clients from
 * holding sockets, and the connection cap bounds how many they hold at once. Node keeps only the
 * first 2,000 header fields by default and drops the rest silently, and answers an HTTP/1.1
 * request without Host with a bare 400: it keeps them all here, and the edge refuses more than
 * MAX_HEADER_FIELDS (431) and a missing Host with the Error body. What Node itself still refuses
 * (timeouts, oversized headers, malformed HTTP, CONNECT) gets the Error body too.
 */
export function applyHttpEdge(
  app: INestApplication,
  config: ServerConfig,
  edge: RequestHandler,
  logger: AppLogger,
): Server {
  const express = app as NestExpressApplication;
  express.disable('x-powered-by');
  express.set('etag', false);
  app.use(edge);
  const server = app.getHttpServer() as Server;
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  server.headersTimeout = config.headersTimeoutMs;
  server.requestTimeout = config.requestTimeoutMs;
  server.maxConnections = config.maxConnections;
  // A createServer option that Nest doesn't pass through; Node reads the property when it starts
  // listening. A slow client is cut between its timeout and one interval later.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    config.connectionsCheckIntervalMs;
  server.maxHeadersCount = 0;
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  // Expect: 100-continue is answered when the body is read (readJsonBody), after admission, so
  // a client without a valid credential is refused before it is invited to upload.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  answerClientErrors(server, logger);
  return server;
}

/**
 * Answers a refused head with its Error body and closes the connection: the body of the request,
 * if any, is left unread, and its framing may be what was refused.
 */
function refuse(res: Response, error: ApiError, requestId: string): void {
  const text = stringifyJson(error.toBody(requestId));
  res.statusCode = error.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.setHeader('Connection', 'close');
  res.end(text);
}

/** Longest delay X-Test-Delay-Ms may ask for. */
const MAX_TEST_DELAY_MS = 60_000;

/**
 * Test only (ENABLE_TEST_DELAY=true, refused unless NODE_ENV=test): a request carrying
 * `X-Test-Delay-Ms: N` is held N ms before it is handled, so tests can have a request in
 * flight while the server shuts down.
 */
export function testDelayMiddleware() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const raw = req.headers['x-test-delay-ms'];
    const ms = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Math.min(Number(raw), MAX_TEST_DELAY_MS) : 0;
    if (ms === 0) return next();
    void sleep(ms).then(() => next());
  };
}
