// The framework floor of `npm run bench`: bare NestJS + Express + `pg`, written as the NestJS docs
// show (one module, one controller, a custom provider for the pool), with the raw baseline's SQL as
// named prepared statements (the service's PET_SQL, which the bench passes in BENCH_PET_SQL as it
// does to the baseline) and nothing else: no auth, limits, validation, logging or headers. It
// reads the status filter and the cursor, so it does every list scenario's work.
// What the service costs above this is what its features cost; what this costs above the raw
// baseline is what Nest and Express cost.
//
// Usage (after `npm run bench` has built both):
//   DATABASE_URL=… PORT=3602 BENCH_PET_SQL="$(node -e "import('./.tmp/bench-dist/pets/pets.repository.js')
//     .then((m) => console.log(JSON.stringify(m.PET_SQL)))")" node .tmp/bench-peers/bench/peers/floor.js
import 'reflect-metadata';
import {
  BadRequestException,
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
import { decodeCursor } from '../../src/pets/cursor.js';

const PG_POOL = Symbol('PG_POOL');
const SQL: Record<string, string> = JSON.parse(process.env.BENCH_PET_SQL ?? '{}');
const STATUS_STATEMENTS: Record<string, string> = {
  available: 'listAvailable',
  pending: 'listPending',
  sold: 'listSold',
};
const LISTS = ['list', ...Object.values(STATUS_STATEMENTS)].flatMap((first) => [first, `${first}After`]);
for (const name of [...LISTS, 'get', 'insert'])
  if (!SQL[name]) throw new Error(`BENCH_PET_SQL has no "${name}" statement`);

interface CreatePet {
  name: string;
  categoryId: number;
  status?: string;
}

@Controller()
class PetsController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  private async run(name: string, values: unknown[]): Promise<unknown[]> {
    return (await this.pool.query({ name, text: SQL[name], values })).rows;
  }

  @Get('v1/pets')
  list(
    @Query('limit') limit = '20',
    @Query('status') status?: string,
    @Query('cursor') cursor?: string,
  ): Promise<unknown[]> {
    const first = status === undefined ? 'list' : STATUS_STATEMENTS[status];
    if (first === undefined) throw new BadRequestException('status');
    if (cursor === undefined) return this.run(first, [limit]);
    const after = decodeCursor(cursor);
    if (after === null) throw new BadRequestException('cursor');
    return this.run(`${first}After`, [after, limit]);
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
    const [pet] = await this.run('insert', [body.name, body.categoryId, body.status ?? 'available', now, now]);
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
      // The service's pool: its size, and its connections kept open (as bench/baseline.mjs's).
      useFactory: () =>
        new pg.Pool({
          connectionString: process.env.DATABASE_URL,
          max: Number(process.env.DB_POOL_MAX ?? 10),
          idleTimeoutMillis: 0,
        }),
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
