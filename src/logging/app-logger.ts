import type { LoggerService } from '@nestjs/common';
import { hostname } from 'node:os';
import { register as registerOnExit } from 'on-exit-leak-free';
import {
  destination as pinoDestination,
  DestinationStream,
  Level,
  LevelWithSilent,
  levels,
  Logger,
  pino,
  stdTimeFunctions,
} from 'pino';
import { redactSecrets } from './redact-secrets.js';

/** Anything that could carry a secret, should it ever reach a log object. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'authorization',
];

/** Probes and scrapes: logged at debug when they succeed, so they do not drown the access log. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Longest client-chosen text (the URL, a forwarded address) copied into a log line. */
export const MAX_LOGGED_CHARS = 1024;

/**
 * The URL and a forwarded address are whatever the client sent, up to the 16 KiB header limit,
 * on every request, refused ones included: a line holds at most MAX_LOGGED_CHARS of each, with
 * every secret-shaped string in them redacted first (redact-secrets.ts), so a cut never leaves
 * part of a secret behind.
 */
export function clientText(text: string): string {
  const safe = redactSecrets(text);
  return safe.length <= MAX_LOGGED_CHARS ? safe : `${safe.slice(0, MAX_LOGGED_CHARS)}…[${safe.length} chars]`;
}

/** What the access log says about one finished (or abandoned) request. */
export interface AccessRecord {
  requestId: string;
  /** The request's trace id, while tracing is on. */
  traceId?: string;
  method: string;
  route: string;
  url: string;
  /** undefined when the client went away before the response was complete. */
  status: number | undefined;
  durationMs: number;
  ip: string | undefined;
  keyId: string | undefined;
  /** Who made an admin API request: the admin token's name (absent on the public API). */
  actor?: string;
  /** When the request ended (Unix ms), when the line is written later than that; else now. */
  endedAt?: number;
}

/** What the log says about a request refused before any route (AppLogger.refused). */
export interface RefusedRecord {
  requestId: string;
  /** Absent when the request line itself could not be read. */
  method?: string;
  url?: string;
  status: number;
  code: string;
  /** Node's code for what was wrong (HPE_HEADER_OVERFLOW, ERR_HTTP_REQUEST_TIMEOUT, …). */
  reason?: string;
  ip: string | undefined;
}

export interface AppLoggerOptions {
  level: LevelWithSilent;
  /** Human-readable output (development): pino's own object path through pino-pretty. */
  pretty: boolean;
}

/**
 * The process's logger: pino for every line Nest and the services write, and a direct writer
 * for the access log, one line per request.
 *
 * The access line is the hot path of logging (one per request), so it is not built by pino's
 * object path: no per-request child logger, no redaction pass over objects it never logs
 * (the line holds no header), no serializers. It is written by hand with exactly the fields
 * and the format pino writes (level label, ISO time, pid, hostname, msg), JSON-escaped where a
 * value comes from the client, into the same asynchronous destination as pino's own lines, so
 * the stream stays one sequence of JSON lines. What this saves: the ledger's logging line in
 * bench scenario listPets. Its client text (the URL, a forwarded address) is redacted field by
 * field (clientText); its request id never holds a secret (requestIdFor refuses one).
 */
export class AppLogger {
  readonly pino: Logger;
  private readonly stream: DestinationStream;
  private readonly prefix: string;
  private readonly threshold: number;
  private readonly json: boolean;

  constructor(options: AppLoggerOptions, stream: DestinationStream) {
    this.stream = stream;
    this.json = !options.pretty;
    // Every line of pino's (Nest's, the exception filter's, the services') passes through
    // redactSecrets whole: whatever a message or an error quotes of a request, no secret is written.
    const redacting: DestinationStream & { flush?: (cb: (err?: Error) => void) => void } = {
      write: (line: string) => stream.write(redactSecrets(line)),
      flush: (cb) => {
        const target = stream as { flush?: (cb: (err?: Error) => void) => void };
        if (typeof target.flush === 'function') target.flush(cb);
        else cb();
      },
    };
    this.pino = pino(
      {
        level: options.level,
        redact: { paths: REDACT, censor: '[redacted]' },
        // JSON for machines: ISO time and level names, which log stores index without a mapping.
        ...(options.pretty
          ? {}
          : { timestamp: stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } }),
      },
      redacting,
    );
    this.threshold = options.level === 'silent' ? Infinity : levels.values[options.level];
    this.prefix = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  }

  /** Writes the access line of a request at the level its outcome deserves. */
  access(record: AccessRecord): void {
    const level = accessLevel(record);
    if (levels.values[level] < this.threshold) return;
    const msg = record.status === undefined ? 'request aborted' : 'request completed';
    if (!this.json) {
      this.pino[level](
        {
          ...record,
          endedAt: undefined,
          url: clientText(record.url),
          ip: record.ip === undefined ? undefined : clientText(record.ip),
        },
        msg,
      );
      return;
    }
    let line =
      `{"level":"${level}","time":"${new Date(record.endedAt ?? Date.now()).toISOString()}"${this.prefix}` +
      `,"requestId":${quote(record.requestId)}` +
      (record.traceId === undefined ? '' : `,"traceId":"${record.traceId}"`) +
      `,"method":${quote(record.method)},"route":${quote(record.route)}` +
      `,"url":${quote(clientText(record.url))}`;
    if (record.status !== undefined) line += `,"status":${record.status}`;
    line += `,"durationMs":${record.durationMs}`;
    if (record.ip !== undefined) line += `,"ip":${quote(clientText(record.ip))}`;
    if (record.keyId !== undefined) line += `,"keyId":${quote(record.keyId)}`;
    if (record.actor !== undefined) line += `,"actor":${quote(record.actor)}`;
    this.stream.write(`${line},"msg":"${msg}"}\n`);
  }

  /**
   * The line of a request refused before the application saw it (src/http/client-errors.ts:
   * malformed HTTP, oversized headers, a client too slow, CONNECT, an unknown Expect): what the
   * client chose, so info, never error, with the client's address (the peer's: the headers that
   * would name a forwarded one were not read, or not trusted that early).
   */
  refused(record: RefusedRecord): void {
    this.pino.info(
      {
        requestId: record.requestId,
        ...(record.method === undefined ? {} : { method: record.method }),
        ...(record.url === undefined ? {} : { url: clientText(record.url) }),
        status: record.status,
        code: record.code,
        ...(record.reason === undefined ? {} : { reason: record.reason }),
        ip: record.ip === undefined ? undefined : clientText(record.ip),
      },
      'request refused',
    );
  }

  /** An error or warning about one request, carrying its id (the client's X-Request-Id). */
  request(
    requestId: string | undefined,
    level: 'warn' | 'error',
    context: string,
    message: string,
    err?: unknown,
  ): void {
    this.pino[level]({ requestId, context, ...(err === undefined ? {} : { err }) }, message);
  }

  /** Nest's LoggerService over this logger: `context` is Nest's last argument, as nestjs-pino does. */
  nest(): LoggerService {
    const call = (level: Level, message: unknown, params: unknown[]): void => {
      const fields: Record<string, unknown> = {};
      if (params.length > 0) fields.context = params[params.length - 1];
      const extra = params.slice(0, -1);
      if (message instanceof Error) fields.err = message;
      else if (typeof message === 'object' && message !== null) Object.assign(fields, message);
      // Nest's error(message, stack, context): the stack travels as the second argument.
      if (level === 'error' && typeof message === 'string' && typeof extra[0] === 'string' && extra[0].includes('\n')) {
        fields.err = { message, stack: extra[0] };
      }
      if (typeof message === 'object' && message !== null) this.pino[level](fields);
      else this.pino[level](fields, String(message));
    };
    return {
      log: (message, ...params) => call('info', message, params),
      error: (message, ...params) => call('error', message, params),
      warn: (message, ...params) => call('warn', message, params),
      debug: (message, ...params) => call('debug', message, params),
      verbose: (message, ...params) => call('trace', message, params),
      fatal: (message, ...params) => call('fatal', message, params),
    };
  }

  /** Writes out what is buffered (at exit; the stream flushes by itself otherwise). */
  flush(): void {
    const s = this.stream as DestinationStream & { flushSync?: () => void };
    try {
      s.flushSync?.();
    } catch {
      // not ready yet (nothing written) or already closed
    }
  }
}

/**
 * Error is for the service's own faults: a 5xx, except 501 (a protocol feature the client chose
 * and the service does not implement, such as `Transfer-Encoding: gzip, chunked`), which is
 * info like every other refusal of what a client sent; a failing probe is a warning (a
 * readiness 503 while draining is expected).
 */
export function accessLevel(record: Pick<AccessRecord, 'url' | 'status'>): Level {
  const q = record.url.indexOf('?');
  if (PROBE_PATHS.has(q === -1 ? record.url : record.url.slice(0, q))) {
    return record.status !== undefined && record.status < 400 ? 'debug' : 'warn';
  }
  return record.status !== undefined && record.status >= 500 && record.status !== NOT_IMPLEMENTED ? 'error' : 'info';
}

/** 501: what the client asked for is not implemented here (its choice, not the service's fault). */
const NOT_IMPLEMENTED = 501;

// eslint-disable-next-line no-control-regex
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** A JSON string literal; the common case (nothing to escape) without JSON.stringify. */
function quote(s: string): string {
  return s.length <= 256 && PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * How much is gathered before it is handed to the writer (about 150 access lines), counted in
 * string length: bytes for the ASCII the lines mostly are, fewer than the bytes otherwise.
 */
export const LOG_BATCH_BYTES = 48 * 1024;
/** Longest a gathered line waits for its batch to fill before it is handed over anyway. */
export const LOG_FLUSH_MS = 100;

/**
 * A destination that gathers lines and hands them to `target` in batches: once `maxBytes` have
 * gathered, or `maxDelayMs` after the first line of a batch, whichever comes first. Every
 * line goes through it, pino's and the access log's alike, so their order is kept.
 *
 * Why not sonic-boom's own `minLength`: it appends each line to one growing string and measures
 * that whole string (Buffer.byteLength) on every write, work that grows with the batch; here a
 * batch is joined once. And why batch at all: each asynchronous write costs a hand-off to
 * libuv's thread pool whatever its size, so the CPU per line falls as batches grow, and under
 * load an unbatched stream writes every few lines (bench scenario listPets, the ledger's logging
 * line).
 */
export class BatchedDestination implements DestinationStream {
  private lines: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly target: DestinationStream & { flushSync?: () => void },
    private readonly maxBytes = LOG_BATCH_BYTES,
    private readonly maxDelayMs = LOG_FLUSH_MS,
  ) {
    // Whatever is gathered is written out synchronously when the process exits (process.exit
    // and the end of the shutdown included; a SIGKILL loses at most maxDelayMs of lines).
    registerOnExit(this, (self) => self.flushSync());
  }

  write(line: string): void {
    this.lines.push(line);
    this.bytes += line.length;
    if (this.bytes >= this.maxBytes) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.maxDelayMs);
      this.timer.unref();
    }
  }

  /**
   * Hands what is gathered to the target, which writes it asynchronously; `done` (pino's
   * logger.flush) is called once the target has written it.
   */
  flush(done?: (err?: Error) => void): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.lines.length > 0) {
      const batch = this.lines.length === 1 ? this.lines[0] : this.lines.join('');
      this.lines = [];
      this.bytes = 0;
      this.target.write(batch);
    }
    if (done === undefined) return;
    const target = this.target as { flush?: (cb: (err?: Error) => void) => void };
    if (typeof target.flush === 'function') target.flush(done);
    else done();
  }

  /** Writes out everything gathered or pending in the target, synchronously (at exit). */
  flushSync(): void {
    this.flush();
    try {
      this.target.flushSync?.();
    } catch {
      // not ready yet (nothing written) or already closed
    }
  }
}

/**
 * stdout, written asynchronously and in batches (BatchedDestination): a line is handed to the
 * kernel off the request path, within LOG_FLUSH_MS, so logging never blocks a request on a slow
 * pipe and costs one write per batch under load instead of one per line or few.
 */
export function stdoutStream(): DestinationStream {
  return new BatchedDestination(pinoDestination({ dest: 1, sync: false }));
}

/**
 * Readable output for development. pino-pretty is a development dependency, absent from the
 * production image: without it the logs stay JSON.
 */
export async function prettyStream(): Promise<DestinationStream | undefined> {
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
