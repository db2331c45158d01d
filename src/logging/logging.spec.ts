import { ArgumentsHost } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { pinoHttp, Options } from 'pino-http';
import { AllExceptionsFilter } from '../common/all-exceptions.filter.js';
import { requestIdMiddleware } from '../common/request-id.js';
import { loadConfig } from '../config/config.js';
import { loggerParams } from './logging.module.js';

/** A pino destination keeping every line, parsed. */
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

describe('access log', () => {
  let server: http.Server;
  let url: string;
  const { stream, lines } = capture();

  beforeAll(async () => {
    const params = await loggerParams(loadConfig({ NODE_ENV: 'production', LOG_LEVEL: 'info' }), stream);
    const [options, destination] = params.pinoHttp as [Options, Writable];
    const logger = pinoHttp(options, destination);
    const withId = requestIdMiddleware();
    server = http.createServer((req, res) => {
      withId(req as Request, res as Response, () => {
        logger(req, res);
        res.statusCode = req.url === '/boom' ? 500 : 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const finished = async (id: string) => {
    for (let i = 0; i < 100; i++) {
      const line = lines.find((l) => l.requestId === id);
      if (line) return line;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no log line for ${id}`);
  };

  it('writes one JSON line per request with the request id and never the Authorization header', async () => {
    await fetch(`${url}/v1/pets?limit=5`, {
      headers: { 'X-Request-Id': 'unit-1', Authorization: 'Bearer sk_live_secret' },
    });
    const line = await finished('unit-1');
    expect(line).toEqual(
      expect.objectContaining({
        level: 'info',
        time: expect.stringMatching(/Z$/),
        requestId: 'unit-1',
        method: 'GET',
        route: 'unmatched',
        url: '/v1/pets?limit=5',
        status: 204,
        durationMs: expect.any(Number),
        msg: 'request completed',
      }),
    );
    expect(JSON.stringify(lines)).not.toContain('sk_live_secret');
  });

  it('logs 5xx at error level and probes that succeed at debug (hidden at info)', async () => {
    await fetch(`${url}/boom`, { headers: { 'X-Request-Id': 'unit-2' } });
    expect(await finished('unit-2')).toEqual(expect.objectContaining({ level: 'error', status: 500 }));
    await fetch(`${url}/healthz`, { headers: { 'X-Request-Id': 'unit-3' } });
    await fetch(`${url}/v1`, { headers: { 'X-Request-Id': 'unit-4' } });
    await finished('unit-4');
    expect(lines.find((l) => l.requestId === 'unit-3')).toBeUndefined();
  });
});

describe('error logs of the exception filter', () => {
  it('go through the request logger, so they carry the request id', () => {
    const { stream, lines } = capture();
    const req = { method: 'GET', path: '/v1/pets', log: pino({ level: 'info' }, stream).child({ requestId: 'err-1' }) };
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
    new AllExceptionsFilter({} as HttpAdapterHost).catch(new Error('kaboom'), host);
    expect(lines).toEqual([
      expect.objectContaining({
        requestId: 'err-1',
        context: 'Errors',
        err: expect.objectContaining({ message: 'kaboom' }),
      }),
    ]);
  });
});
