import { Controller, Get, Injectable, Module, OnModuleInit, type INestApplication } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { NextFunction, Request, Response } from 'express';
import request from 'supertest';
import { useBehindRoutes } from './after-routes.js';

/**
 * Canary for after-routes.ts, on a real Nest application: a layer added from onModuleInit sits
 * behind the routes and in front of Nest's not-found handler. A failure here means an upgrade
 * of @nestjs/core changed NestApplication.init's order: requests no route answers would lose
 * their rate-limit headers (admission/unmatched-routes.ts).
 */
function internal(ok: boolean, what: string): void {
  if (!ok)
    throw new Error(
      `Nest internal changed: ${what}. Re-check src/library-internals/after-routes.ts and src/admission/unmatched-routes.ts.`,
    );
}

@Controller('things')
class ThingsController {
  @Get(':id')
  get(): object {
    return { ok: true };
  }
}

const behind: string[] = [];

@Injectable()
class Behind implements OnModuleInit {
  constructor(private readonly host: HttpAdapterHost) {}
  onModuleInit(): void {
    const mounted = useBehindRoutes(this.host, '/', (req: Request, res: Response, next: NextFunction) => {
      behind.push(req.path);
      res.setHeader('X-Behind', 'yes');
      next();
    });
    internal(mounted, 'the HTTP adapter of a Nest application is not Express');
  }
}

@Module({ controllers: [ThingsController], providers: [Behind] })
class CanaryModule {}

describe('Nest internals: init order (routes, onModuleInit, not-found handler)', () => {
  let app: INestApplication;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [CanaryModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(() => app.close());
  beforeEach(() => (behind.length = 0));

  it('sees exactly the requests no route answered, before the not-found handler', async () => {
    const served = await request(app.getHttpServer()).get('/things/7');
    expect(served.status).toBe(200);
    expect(served.body).toEqual({ ok: true });
    internal(
      behind.length === 0 && served.headers['x-behind'] === undefined,
      'a layer added in onModuleInit runs before the routes',
    );

    const unknown = await request(app.getHttpServer()).post('/things/7');
    internal(behind.length === 1, 'a layer added in onModuleInit is not reached by a request no route answers');
    internal(
      unknown.status === 404 && unknown.headers['x-behind'] === 'yes',
      `the not-found handler answers before the layer added in onModuleInit (status ${unknown.status})`,
    );
  });
});
