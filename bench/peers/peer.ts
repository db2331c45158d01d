// The peer of `npm run bench`: what a user writes from the NestJS and Prisma docs: NestJS +
// Express + Prisma ORM (a PrismaService, the pg driver adapter Prisma 7 needs), a global
// ValidationPipe with class-validator DTOs, and nothing else: no auth, limits, logging or headers.
// It reads the status filter and the cursor, so it does every list scenario's work, with the
// query Prisma writes for them.
// The service must be at least as fast as this on every scenario (a target: bench/targets.mjs).
//
// Usage (after `npm run bench` has built it): DATABASE_URL=… PORT=3603 node .tmp/bench-peers/bench/peers/peer.js
import 'reflect-metadata';
import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Injectable,
  Module,
  NotFoundException,
  OnModuleDestroy,
  OnModuleInit,
  Param,
  ParseIntPipe,
  Post,
  Query,
  ValidationPipe,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PrismaPg } from '@prisma/adapter-pg';
import { Type } from 'class-transformer';
import { IsEnum, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { PetStatus, PrismaClient } from '../../src/generated/prisma/client.js';
import { decodeCursor } from '../../src/pets/cursor.js';

// JSON has no BigInt; Node 24's JSON.rawJSON writes the exact digits, older Nodes get a string.
const rawJSON = (JSON as unknown as { rawJSON?: (text: string) => unknown }).rawJSON;
(BigInt.prototype as unknown as { toJSON: () => unknown }).toJSON = function (this: bigint) {
  return rawJSON ? rawJSON(this.toString()) : this.toString();
};

@Injectable()
class PrismaService extends PrismaClient implements OnModuleInit, OnModuleDestroy {
  constructor() {
    const adapter = new PrismaPg({
      connectionString: process.env.DATABASE_URL,
      max: Number(process.env.DB_POOL_MAX ?? 10),
      // Connections kept open, as the service's pool keeps them (bench/baseline.mjs).
      idleTimeoutMillis: 0,
    });
    super({ adapter });
  }

  async onModuleInit(): Promise<void> {
    await this.$connect();
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}

class ListPetsQuery {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number;
  @IsOptional() @IsEnum(PetStatus) status?: PetStatus;
  @IsOptional() @IsString() cursor?: string;
}

/** The id a cursor points after (the interface's cursor, decoded as the service decodes it). */
function afterId(cursor: string): bigint {
  const id = decodeCursor(cursor);
  if (id === null) throw new BadRequestException('cursor');
  return id;
}

class CreatePetDto {
  @IsString() @Length(1, 255) name: string;
  @IsInt() @Min(1) categoryId: number;
  @IsOptional() @IsEnum(PetStatus) status?: PetStatus;
}

@Controller()
class PetsController {
  constructor(private readonly prisma: PrismaService) {}

  @Get('v1/pets')
  list(@Query() { limit = 20, status, cursor }: ListPetsQuery) {
    const id = cursor === undefined ? undefined : { gt: afterId(cursor) };
    return this.prisma.pet.findMany({ where: { status, id }, orderBy: { id: 'asc' }, take: limit });
  }

  @Get('v1/pets/:petId')
  async get(@Param('petId', ParseIntPipe) id: number) {
    const pet = await this.prisma.pet.findUnique({ where: { id } });
    if (!pet) throw new NotFoundException();
    return pet;
  }

  @Post('v1/pets')
  create(@Body() data: CreatePetDto) {
    return this.prisma.pet.create({ data });
  }

  @Get('readyz')
  async ready(): Promise<{ status: string }> {
    await this.prisma.$queryRaw`SELECT 1`;
    return { status: 'ready' };
  }
}

@Module({ controllers: [PetsController], providers: [PrismaService] })
class AppModule {}

const app = await NestFactory.create(AppModule, { logger: ['error'] });
app.useGlobalPipes(new ValidationPipe({ transform: true }));
// SIGTERM and SIGINT only: without a list Nest also closes on SIGUSR2, the bench's profiler toggle.
app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
await app.listen(Number(process.env.PORT ?? 3603), process.env.HOST ?? '127.0.0.1');
