// The framework floor of `npm run bench`: bare NestJS + Express + `pg`, written as the NestJS docs
// show (one module, one controller, a custom provider for the pool), with the raw baseline's SQL as
// named prepared statements and nothing else: no auth, limits, validation, logging or headers.
// What the service costs above this is what its features cost; what this costs above the raw
// baseline is what Nest and Express cost.
//
// Usage (after `npm run bench` has built it): DATABASE_URL=… PORT=3602 node .tmp/bench-peers/bench/peers/floor.js
import 'reflect-metadata';
import {
  Body,
  Controller,
  Get,
  Inject,
  Module,
  NotFoundException,
  OnApplicationShutdown,
  Param,
  Post,
  Query,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';

const PG_POOL = Symbol('PG_POOL');
const COLUMNS = 'SELECT "id", "name", "category_id" AS "categoryId", "status"::text AS "status" FROM "pets"';
const SQL = {
  list: `${COLUMNS} ORDER BY "id" LIMIT $1`,
  listStatus: `${COLUMNS} WHERE "status" = CAST($1::text AS "PetStatus") ORDER BY "id" LIMIT $2`,
  get: `${COLUMNS} WHERE "id" = $1`,
  create:
    'INSERT INTO "public"."pets" ("name","category_id","status","created_at","updated_at") VALUES ($1,$2,CAST($3::text AS "public"."PetStatus"),$4,$5) RETURNING "public"."pets"."id", "public"."pets"."name", "public"."pets"."category_id" AS "categoryId", "public"."pets"."status"::text',
};

interface CreatePet {
  name: string;
  categoryId: number;
  status?: string;
}

@Controller()
class PetsController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  private async run(name: keyof typeof SQL, values: unknown[]): Promise<unknown[]> {
    return (await this.pool.query({ name, text: SQL[name], values })).rows;
  }

  @Get('v1/pets')
  list(@Query('limit') limit = '20', @Query('status') status?: string): Promise<unknown[]> {
    return status === undefined ? this.run('list', [limit]) : this.run('listStatus', [status, limit]);
  }

  @Get('v1/pets/:petId')
  async get(@Param('petId') petId: string): Promise<unknown> {
    const [pet] = await this.run('get', [petId]);
    if (!pet) throw new NotFoundException();
    return pet;
  }

  @Post('v1/pets')
  async create(@Body() body: CreatePet): Promise<unknown> {
    const now = new Date();
    const [pet] = await this.run('create', [body.name, body.categoryId, body.status ?? 'available', now, now]);
    return pet;
  }

  @Get('readyz')
  async ready(): Promise<{ status: string }> {
    await this.pool.query('SELECT 1');
    return { status: 'ready' };
  }
}

@Module({
  controllers: [PetsController],
  providers: [
    {
      provide: PG_POOL,
      useFactory: () =>
        new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) }),
    },
  ],
})
class AppModule implements OnApplicationShutdown {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  onApplicationShutdown(): Promise<void> {
    return this.pool.end();
  }
}

const app = await NestFactory.create(AppModule, { logger: ['error'] });
// SIGTERM and SIGINT only: without a list Nest also closes on SIGUSR2, the bench's profiler toggle.
app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
await app.listen(Number(process.env.PORT ?? 3602), process.env.HOST ?? '127.0.0.1');
