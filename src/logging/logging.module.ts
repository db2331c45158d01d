import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import { LoggerModule, Params } from 'nestjs-pino';
import { destination as pinoDestination, DestinationStream, LevelWithSilent, LoggerOptions, stdTimeFunctions } from 'pino';
import type { Options } from 'pino-http';
import { principalOf } from '../auth/auth.service.js';
import { requestIdFor } from '../common/request-id.js';
import { routeTemplate } from '../common/route-template.js';
import type { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';

/** Probes and scrapes: logged at debug when they succeed, so they do not drown the access log. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Anything that could carry a secret, should it ever reach a log object. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
];

/**
 * The access log line, one per request, written when the response is finished: method, route
 * template, path, status, duration, client address and API key id (never the key; the
 * Authorization header is never logged). The request id is bound to every line of the request.
 */
function accessLog(req: Request, res: Response, durationMs: number): Record<string, unknown> {
  return {
    method: req.method,
    route: routeTemplate(req),
    url: req.originalUrl ?? req.url,
    status: res.writableFinished ? res.statusCode : undefined,
    durationMs,
    ip: req.ip,
    keyId: principalOf(req)?.keyId,
  };
}

function pathOf(req: Request): string {
  return (req.originalUrl ?? req.url).split('?', 1)[0];
}

/** 5xx are errors, except a failing probe (a readiness 503 while draining is expected). */
function level(req: Request, res: Response, err?: Error): LevelWithSilent {
  if (PROBE_PATHS.has(pathOf(req))) return res.statusCode < 400 && !err ? 'debug' : 'warn';
  if (err || res.statusCode >= 500) return 'error';
  return 'info';
}

/** pino and pino-http settings from the configuration; `destination` replaces stdout (tests). */
export async function loggerParams(config: AppConfig, destination?: DestinationStream): Promise<Params> {
  const pretty = config.nodeEnv === 'development' && !destination;
  const base: LoggerOptions = {
    level: config.logLevel,
    redact: { paths: REDACT, censor: '[redacted]' },
    // JSON for machines: ISO time and level names, which log stores index without a mapping.
    ...(pretty
      ? {}
      : { timestamp: stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } }),
  };
  const http: Options<Request, Response> = {
    ...base,
    // The id the request-id middleware chose (also echoed as X-Request-Id).
    genReqId: (req) => (typeof req.id === 'string' ? req.id : requestIdFor(req)),
    customAttributeKeys: { reqId: 'requestId' },
    // Lines logged during a request carry only its id, not the whole request object.
    quietReqLogger: true,
    quietResLogger: true,
    customLogLevel: level,
    customSuccessMessage: (req, res) => (res.writableFinished ? 'request completed' : 'request aborted'),
    customErrorMessage: () => 'request failed',
    customSuccessObject: (req, res, value: { responseTime: number }) => accessLog(req, res, value.responseTime),
    customErrorObject: (req, res, _err, value: { responseTime: number }) => accessLog(req, res, value.responseTime),
  };
  const stream = destination ?? (pretty ? await prettyStream() : stdoutStream());
  return {
    pinoHttp: (stream ? [http, stream] : http) as Params<IncomingMessage, ServerResponse>['pinoHttp'],
  };
}

/**
 * stdout, written asynchronously: a line is handed to the kernel off the request path, and
 * lines logged while a write is under way go out together in the next one, so logging never
 * blocks a request on a slow pipe and costs one write per batch, not one per line, under
 * load. pino flushes what is left synchronously when the process exits.
 */
function stdoutStream(): DestinationStream {
  return pinoDestination({ dest: 1, sync: false });
}

/**
 * Readable output for development. pino-pretty is a development dependency, absent from the
 * production image: without it the logs stay JSON.
 */
async function prettyStream(): Promise<DestinationStream | undefined> {
  try {
    const { default: pretty } = await import('pino-pretty');
    return pretty({
      colorize: true,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,context',
      messageFormat: '{if context}[{context}] {end}{msg}',
    });
  } catch {
    return undefined;
  }
}

/**
 * Structured logs (nestjs-pino): JSON lines on stdout, pretty in development. configureApp
 * makes Nest's Logger write through it, so every log of the process is in the same stream.
 */
export const LoggingModule = LoggerModule.forRootAsync({
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig) => loggerParams(config),
});
