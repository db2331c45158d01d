import {
  CanActivate,
  Controller,
  ExecutionContext,
  Get,
  Injectable,
  Module,
  OnModuleInit,
  SetMetadata,
  UseGuards,
  type INestApplication,
} from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { NextFunction, Request, Response } from 'express';
import request from 'supertest';
import { httpExecutionContext, useBehindRoutes } from './after-routes.js';

/**
 * Canary for after-routes.ts, on a real Nest application: a layer added from onModuleInit sits
 * behind the routes and in front of Nest's not-found handler, and the hand-built context
 * answers like the one Nest gives a guard. A failure here means an upgrade of @nestjs/core
 * changed NestApplication.init's order or ExecutionContext: requests no route answers would
 * lose their rate-limit headers, or the throttlers' functions would read a wrong context
 * (admission/unmatched-routes.ts).
 */
function internal(ok: boolean, what: string): void {
  if (!ok)
    throw new Error(
      `Nest internal changed: ${what}. Re-check src/library-internals/after-routes.ts and src/admission/unmatched-routes.ts.`,
    );
}

const MARK = 'canary:mark';
let nestContext: ExecutionContext | undefined;

@Injectable()
class CapturingGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    nestContext = context;
    return true;
  }
}

@Controller('things')
@SetMetadata(MARK, 'class')
class ThingsController {
  @Get(':id')
  @SetMetadata(MARK, 'handler')
  @UseGuards(CapturingGuard)
  get(): object {
    return { ok: true };
  }
}

const behind: { path: string; context: ExecutionContext }[] = [];

@Injectable()
class Behind implements OnModuleInit {
  constructor(private readonly host: HttpAdapterHost) {}
  onModuleInit(): void {
    const mounted = useBehindRoutes(this.host, '/', (req: Request, res: Response, next: NextFunction) => {
      behind.push({
        path: req.path,
        context: httpExecutionContext(req, res, next, ThingsController, ThingsController.prototype.get),
      });
      res.setHeader('X-Behind', 'yes');
      next();
    });
    internal(mounted, 'the HTTP adapter of a Nest application is not Express');
  }
}

@Module({ controllers: [ThingsController], providers: [Behind, CapturingGuard] })
class CanaryModule {}

describe('Nest internals: init order (routes, onModuleInit, not-found handler) and ExecutionContext', () => {
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

  it('builds a context that answers like the one Nest gives a guard', async () => {
    await request(app.getHttpServer()).get('/things/7').expect(200);
    await request(app.getHttpServer()).get('/nothing').expect(404);
    internal(nestContext !== undefined, 'a guard got no ExecutionContext');
    const ours = behind[0].context;
    // Nest's context is a class instance (its methods on the prototype, its state in fields),
    // the built one an object of functions.
    const nestMethods = new Set<string>();
    for (
      let p = Object.getPrototypeOf(nestContext) as object | null;
      p && p !== Object.prototype;
      p = Object.getPrototypeOf(p) as object | null
    ) {
      for (const name of Object.getOwnPropertyNames(p)) nestMethods.add(name);
    }
    nestMethods.delete('constructor');
    nestMethods.delete('setType'); // ExecutionContextHost's own setter, not part of ExecutionContext
    const expected = [...nestMethods].sort().join(', ');
    const built = Object.keys(ours).sort().join(', ');
    internal(expected === built, `Nest's ExecutionContext has the methods ${expected}; the built one ${built}`);
    const reflector = new Reflector();
    for (const context of [nestContext!, ours]) {
      expect(context.getType()).toBe('http');
      expect(context.getClass()).toBe(ThingsController);
      expect(context.getHandler()).toBe(ThingsController.prototype.get);
      expect(reflector.getAllAndOverride(MARK, [context.getHandler(), context.getClass()])).toBe('handler');
      expect(reflector.get(MARK, context.getClass())).toBe('class');
      const http = context.switchToHttp();
      expect(http.getRequest()).toBe(context.getArgByIndex(0));
      expect(http.getResponse()).toBe(context.getArgByIndex(1));
      expect(context.getArgs()).toHaveLength(3);
    }
    expect(ours.switchToHttp().getRequest<Request>().path).toBe('/nothing');
  });
});
