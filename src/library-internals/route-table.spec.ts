import {
  Controller,
  Get,
  MiddlewareConsumer,
  Module,
  NestModule,
  Post,
  RequestMethod,
  type INestApplication,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Application, NextFunction, Request, Response } from 'express';
import request from 'supertest';
import { allowedMethods, isMiddlewareRoute } from './route-table.js';

/**
 * Canary for route-table.ts: Express's `app.router.stack` and Nest's wildcard middleware route,
 * on a real Nest application. A failure here means an upgrade of express, router or
 * @nestjs/core changed them: 404 route_not_found and 405 method_not_allowed (and the
 * `unmatched` route label) would be decided wrongly.
 */
function internal(ok: boolean, what: string): void {
  if (!ok)
    throw new Error(
      `Framework internal changed: ${what}. Re-check src/library-internals/route-table.ts and its callers.`,
    );
}

@Controller('things')
class ThingsController {
  @Get(':id')
  get(): object {
    return {};
  }

  @Post()
  create(): object {
    return {};
  }
}

@Module({ controllers: [ThingsController] })
class ThingsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    const pass = (_req: Request, _res: Response, next: NextFunction) => next();
    // The ways middleware is bound through Nest's MiddlewareConsumer: all paths and methods, one
    // method on all paths, one method on one path that a route serves with that method.
    consumer.apply(pass).forRoutes('*');
    consumer.apply(pass).forRoutes({ path: '*', method: RequestMethod.GET });
    consumer.apply(pass).forRoutes({ path: 'things/:id', method: RequestMethod.GET });
  }
}

describe('framework internal: Express routing table (router.stack)', () => {
  let app: INestApplication;
  let express: Application;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ThingsModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    express = app.getHttpAdapter().getInstance() as Application;
  });
  afterAll(() => app.close());

  it('lists each route as a layer with its methods and a match()', () => {
    const stack = (express as unknown as { router?: { stack?: unknown } }).router?.stack;
    internal(Array.isArray(stack), "app.router.stack is no longer Express's array of layers");
    const layers = stack as { route?: { path?: unknown; methods?: unknown }; match?: unknown }[];
    const thing = layers.find((l) => l.route?.path === '/things/:id');
    internal(thing !== undefined, 'no layer of router.stack has route.path "/things/:id" for a Nest @Get(":id")');
    internal(typeof thing?.match === 'function', 'a route layer has no match(path)');
    internal(
      JSON.stringify(thing?.route?.methods) === JSON.stringify({ get: true }),
      `route.methods of a GET route is ${JSON.stringify(thing?.route?.methods)}, not {"get":true}`,
    );
    expect(allowedMethods(express, '/things/7')).toEqual(['GET', 'HEAD']);
    expect(allowedMethods(express, '/things')).toEqual(['POST']);
    expect(allowedMethods(express, '/things/7/more')).toEqual([]);
    expect(allowedMethods(express, '/things/%E0%A4%A')).toEqual([]); // malformed percent-encoding
  });

  it('never lets Nest middleware make a method look allowed where no route serves it', () => {
    const layers = (
      express as unknown as { router: { stack: { route?: { path?: unknown; methods?: Record<string, boolean> } }[] } }
    ).router.stack;
    const wildcard = layers.filter((l) => l.route && isMiddlewareRoute(l.route.path));
    internal(
      wildcard.length > 0,
      'Nest no longer mounts middleware bound to one method on every path as a route with a wildcard path (isMiddlewareRoute, http/route-template.ts)',
    );
    const everywhere = layers.filter(
      (l) => l.route && !isMiddlewareRoute(l.route.path) && !['/things/:id', '/things'].includes(String(l.route.path)),
    );
    internal(
      everywhere.every((l) => Object.entries(l.route?.methods ?? {}).every(([m, on]) => !on || m === '_all')),
      `Nest mounts middleware as routes the route table would read as serving a method: ${JSON.stringify(everywhere.map((l) => [l.route?.path, l.route?.methods]))}`,
    );
    expect(allowedMethods(express, '/nothing/here')).toEqual([]);
    expect(allowedMethods(express, '/things')).toEqual(['POST']);
  });

  it('agrees with what the app serves', async () => {
    const server = app.getHttpServer();
    await request(server).get('/things/7').expect(200);
    await request(server).post('/things').expect(201);
    await request(server).post('/things/7').expect(404);
  });
});
