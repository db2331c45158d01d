import {
  ArgumentsHost,
  Catch,
  Controller,
  ExceptionFilter,
  Get,
  HttpException,
  NotFoundException,
  type INestApplication,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Response } from 'express';
import request from 'supertest';
import { isRouterNotFound } from './router-not-found.js';

/**
 * Canary for router-not-found.ts: the message of Nest's not-found exception, on a real Nest
 * application. A failure here means an upgrade of @nestjs/core changed it: every unknown route
 * would be answered 404 not_found (or a handler's 404 route_not_found) instead.
 */
function internal(ok: boolean, what: string): void {
  if (!ok) throw new Error(`Framework internal changed: ${what}. Re-check src/library-internals/router-not-found.ts.`);
}

@Controller('things')
class ThingsController {
  @Get(':id')
  get(): never {
    throw new NotFoundException('Cannot find thing 7'); // a handler's own 404, worded alike on purpose
  }
}

@Catch()
class Recorder implements ExceptionFilter {
  static last: unknown;
  catch(exception: unknown, host: ArgumentsHost): void {
    Recorder.last = exception;
    host.switchToHttp().getResponse<Response>().status(599).end();
  }
}

describe('framework internal: Nest\'s not-found exception ("Cannot GET /x")', () => {
  let app: INestApplication;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [ThingsController] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalFilters(new Recorder());
    await app.init();
  });
  afterAll(() => app.close());

  async function thrownFor(method: 'get' | 'post' | 'delete' | 'm-search', path: string): Promise<HttpException> {
    Recorder.last = undefined;
    await request(app.getHttpServer())[method](path).expect(599);
    internal(
      Recorder.last instanceof HttpException,
      `Nest's answer to ${method.toUpperCase()} ${path} is no longer an HttpException`,
    );
    return Recorder.last as HttpException;
  }

  it.each([
    ['get', '/nothing/here'],
    ['post', '/things/7'],
    ['delete', '/nothing?x=1'],
    // A method token with a hyphen (SSDP's M-SEARCH, which Node's parser accepts).
    ['m-search', '/things/7'],
  ] as const)('recognises the exception for %s %s', async (method, path) => {
    const e = await thrownFor(method, path);
    internal(
      e.getStatus() === 404 && isRouterNotFound(e),
      `Nest's exception for an unknown route is ${e.getStatus()} "${e.message}", which isRouterNotFound no longer recognises`,
    );
  });

  it("does not take a handler's own 404 for the router's", async () => {
    const e = await thrownFor('get', '/things/7');
    expect(e.getStatus()).toBe(404);
    expect(isRouterNotFound(e)).toBe(false);
  });
});
