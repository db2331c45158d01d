import { ArgumentsHost } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import express from 'express';
import { Writable } from 'node:stream';
import request from 'supertest';
import { AllExceptionsFilter } from '../errors/all-exceptions.filter.js';
import { requestEdge } from '../http/http-edge.js';
import { routeTemplate } from '../http/route-template.js';
import { loadConfig } from '../config/config.js';
import fc from 'fast-check';
import { AppLogger, BatchedDestination, MAX_LOGGED_CHARS } from './app-logger.js';
import { createAppLogger } from './logging.module.js';

/** A destination keeping every line, parsed (each write must be whole JSON lines). */
function capture(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n'))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { stream, lines };
}

/** An Express app with the production edge and access log, answering `status` for every path. */
async function appLogging(level: string) {
  const { stream, lines } = capture();
  const logger = await createAppLogger(
    loadConfig({
      NODE_ENV: 'production',
      LOG_LEVEL: level,
      METRICS_PORT: '9464',
      API_KEY_CHECKSUM_SECRET: 'c'.repeat(32),
    }).logging,
    stream,
  );
  const app = express();
  app.use(
    requestEdge(
      () => {},
      (req, res, durationMs) =>
        logger.access({
          requestId: req.id as string,
          method: req.method,
          route: routeTemplate(req),
          url: req.originalUrl,
          status: res.writableFinished ? res.statusCode : undefined,
          durationMs,
          ip: req.ip,
          keyId: req.headers['x-key'] as string | undefined,
          actor: req.headers['x-actor'] as string | undefined,
        }),
    ),
  );
  app.get('/v1/pets/:petId', (_req, res) => void res.status(200).end());
  app.use((req, res) => void res.status(req.path === '/boom' ? 500 : 204).end());
  const finished = async (id: string) => {
    for (let i = 0; i < 200; i++) {
      const line = lines.find((l) => l.requestId === id);
      if (line) return line;
      await new Promise((r) => setImmediate(r));
    }
    throw new Error(`no log line for ${id}`);
  };
  return { app, lines, finished };
}

describe('access log', () => {
  it('writes one JSON line per request, as pino does, with the request id and never the Authorization header', async () => {
    const { app, lines, finished } = await appLogging('info');
    await request(app)
      .get('/v1/pets?limit=5')
      .set('X-Request-Id', 'unit-1')
      .set('Authorization', 'Bearer sk_live_secret');
    const line = await finished('unit-1');
    expect(Object.keys(line)).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'requestId',
      'method',
      'route',
      'url',
      'status',
      'durationMs',
      'ip',
      'msg',
    ]);
    expect(line).toEqual({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      pid: process.pid,
      hostname: expect.any(String),
      requestId: 'unit-1',
      method: 'GET',
      route: 'unmatched',
      url: '/v1/pets?limit=5',
      status: 204,
      durationMs: expect.any(Number),
      ip: expect.stringContaining('127.0.0.1'),
      msg: 'request completed',
    });
    expect(JSON.stringify(lines)).not.toContain('sk_live_secret');
  });

  it('names the route template and the key, and escapes what the client wrote', async () => {
    const { app, finished } = await appLogging('info');
    await request(app).get('/v1/pets/42?q=a\\b').set('X-Request-Id', 'unit-5').set('X-Key', '7');
    const line = await finished('unit-5');
    expect(line).toMatchObject({ route: '/v1/pets/:petId', url: '/v1/pets/42?q=a\\b', status: 200, keyId: '7' });
  });

  it('names the actor of an admin request, escaped, and writes no actor field otherwise', async () => {
    const { app, finished } = await appLogging('info');
    await request(app).get('/admin/v1/keys').set('X-Request-Id', 'unit-a1').set('X-Actor', 'ops "night"');
    expect(await finished('unit-a1')).toMatchObject({ route: expect.any(String), actor: 'ops "night"' });
    await request(app).get('/v1/pets/1').set('X-Request-Id', 'unit-a2');
    expect(await finished('unit-a2')).not.toHaveProperty('actor');
  });

  it('copies at most MAX_LOGGED_CHARS of a long URL into the line', async () => {
    const { app, finished } = await appLogging('info');
    const long = `/v1/pets?${'q'.repeat(12_000)}`;
    await request(app).get(long).set('X-Request-Id', 'unit-8');
    const line = await finished('unit-8');
    expect(line.url).toBe(`${long.slice(0, MAX_LOGGED_CHARS)}…[${long.length} chars]`);
  });

  it('logs 5xx at error level and probes that succeed at debug (hidden at info)', async () => {
    const { app, lines, finished } = await appLogging('info');
    await request(app).get('/boom').set('X-Request-Id', 'unit-2');
    expect(await finished('unit-2')).toEqual(expect.objectContaining({ level: 'error', status: 500 }));
    await request(app).get('/healthz').set('X-Request-Id', 'unit-3');
    await request(app).get('/v1').set('X-Request-Id', 'unit-4');
    await finished('unit-4');
    expect(lines.find((l) => l.requestId === 'unit-3')).toBeUndefined();
  });

  it('stamps a line written later with the instant its request ended', async () => {
    const { stream, lines } = capture();
    const logger = await createAppLogger(loadConfig({ LOG_LEVEL: 'info' }).logging, stream);
    const endedAt = Date.UTC(2026, 10, 27, 8, 30, 0, 123);
    const record = {
      requestId: 'r',
      method: 'GET',
      route: '/v1/pets',
      url: '/v1/pets',
      status: 200,
      durationMs: 1,
      ip: undefined,
      keyId: undefined,
    };
    logger.access({ ...record, endedAt });
    logger.access(record);
    await new Promise((r) => setImmediate(r));
    expect(lines.map((l) => l.time)).toEqual(['2026-11-27T08:30:00.123Z', expect.stringMatching(/^\d{4}-/)]);
    expect(lines[1].time).not.toBe('2026-11-27T08:30:00.123Z');
    expect(lines[0]).not.toHaveProperty('endedAt');
  });

  it('writes nothing below the configured level', async () => {
    const { app, lines, finished } = await appLogging('warn');
    await request(app).get('/v1/pets').set('X-Request-Id', 'unit-6');
    await request(app).get('/boom').set('X-Request-Id', 'unit-7');
    await finished('unit-7');
    expect(lines.map((l) => l.requestId)).toEqual(['unit-7']);
  });
});

describe('error logs of the exception filter', () => {
  it('carry the request id', () => {
    const { stream, lines } = capture();
    const logger = new AppLogger({ level: 'info', pretty: false }, stream as never);
    const req = { method: 'GET', path: '/v1/pets', id: 'err-1' };
    const res = {
      headersSent: false,
      setHeader: () => {},
      removeHeader: () => {},
      status: () => res,
      type: () => res,
      send: () => res,
    };
    const host = {
      switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }),
    } as unknown as ArgumentsHost;
    new AllExceptionsFilter({} as HttpAdapterHost, logger).catch(new Error('kaboom'), host);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'error',
        requestId: 'err-1',
        context: 'Errors',
        err: expect.objectContaining({ message: 'kaboom' }),
      }),
    ]);
  });
});

describe("Nest's logger over pino", () => {
  it('writes the context as a field and an error with its stack', () => {
    const { stream, lines } = capture();
    const nest = new AppLogger({ level: 'info', pretty: false }, stream as never).nest();
    nest.log('started', 'Main');
    nest.error('failed', 'Error: x\n    at y', 'Main');
    nest.debug?.('hidden', 'Main');
    expect(lines).toEqual([
      expect.objectContaining({ level: 'info', context: 'Main', msg: 'started' }),
      expect.objectContaining({
        level: 'error',
        context: 'Main',
        msg: 'failed',
        err: expect.objectContaining({ stack: 'Error: x\n    at y' }),
      }),
    ]);
  });
});

describe('BatchedDestination', () => {
  /** A target that records each write it is handed, and whether it was flushed synchronously. */
  function target() {
    const writes: string[] = [];
    let syncFlushes = 0;
    return {
      writes,
      syncFlushes: () => syncFlushes,
      stream: {
        write: (s: string) => void writes.push(s),
        flushSync: () => void (syncFlushes += 1),
      },
    };
  }

  afterEach(() => jest.useRealTimers());

  it('hands lines over in order, joined, once a batch has gathered maxBytes', () => {
    const t = target();
    const dest = new BatchedDestination(t.stream, 30, 60_000);
    dest.write(`${'a'.repeat(13)}\n`);
    dest.write(`${'b'.repeat(13)}\n`);
    expect(t.writes).toEqual([]);
    dest.write(`${'c'.repeat(13)}\n`);
    expect(t.writes).toEqual([`${'a'.repeat(13)}\n${'b'.repeat(13)}\n${'c'.repeat(13)}\n`]);
    dest.flush();
    expect(t.writes).toHaveLength(1); // nothing left, nothing written
  });

  it('hands a partial batch over maxDelayMs after its first line, not before', () => {
    jest.useFakeTimers();
    const t = target();
    const dest = new BatchedDestination(t.stream, 1 << 20, 100);
    dest.write('one\n');
    jest.advanceTimersByTime(60);
    dest.write('two\n'); // the delay runs from the first line of the batch
    jest.advanceTimersByTime(39);
    expect(t.writes).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(t.writes).toEqual(['one\ntwo\n']);
    expect(jest.getTimerCount()).toBe(0); // no timer while nothing is gathered
  });

  it('writes everything out synchronously on flushSync (what the exit hook calls)', () => {
    const t = target();
    const dest = new BatchedDestination(t.stream, 1 << 20, 60_000);
    dest.write('last words\n');
    dest.flushSync();
    expect(t.writes).toEqual(['last words\n']);
    expect(t.syncFlushes()).toBe(1);
  });

  it("passes pino's flush(callback) on once the gathered lines are handed over", () => {
    const t = target();
    const order: string[] = [];
    const withFlush = {
      ...t.stream,
      flush: (cb: () => void) => (order.push(`target flush after ${t.writes.length} write(s)`), cb()),
    };
    const dest = new BatchedDestination(withFlush, 1 << 20, 60_000);
    dest.write('pending\n');
    dest.flush(() => order.push('done'));
    expect(order).toEqual(['target flush after 1 write(s)', 'done']);
    // a target without flush(): the callback is called at once
    const plain = new BatchedDestination(t.stream, 1 << 20, 60_000);
    let called = false;
    plain.flush(() => (called = true));
    expect(called).toBe(true);
  });

  it('loses, reorders and splits no line, and hands over no batch smaller than maxBytes but the last', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ maxLength: 40 }).map((s) => `${s}\n`),
          { maxLength: 60 },
        ),
        fc.integer({ min: 1, max: 200 }),
        (lines, maxBytes) => {
          const t = target();
          const dest = new BatchedDestination(t.stream, maxBytes, 60_000);
          const boundaries = new Set<number>([0]);
          let written = 0;
          for (const line of lines) {
            dest.write(line);
            written += line.length;
            boundaries.add(written);
          }
          const handedBeforeFlush = t.writes.length;
          expect(written - t.writes.join('').length).toBeLessThan(maxBytes); // a full batch is never held back
          dest.flush();
          expect(t.writes.join('')).toBe(lines.join(''));
          let at = 0;
          t.writes.forEach((batch, i) => {
            at += batch.length;
            expect(boundaries.has(at)).toBe(true); // batches end where lines end
            if (i < handedBeforeFlush) expect(batch.length).toBeGreaterThanOrEqual(maxBytes);
          });
        },
      ),
    );
  });
});
