import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import { WRITE_TRANSACTION } from '../database/transactions.js';
import type { PreparedRead } from '../database/database.js';
import { PrismaService } from '../database/prisma.service.js';
import type { PageRequest } from './paging.js';
import type { PetStatus } from './pet-status.js';

/** An int64 as the database driver gives it: a number while a double holds it exactly, else a bigint. */
export type Int64 = number | bigint;

export interface Pet {
  id: Int64;
  name: string;
  categoryId: Int64;
  status: PetStatus;
}

export interface PetPage {
  pets: Pet[];
  /** Id of the last animal returned, when more animals follow it. */
  nextAfter: Int64 | null;
}

export interface NewPet {
  name: string;
  categoryId: bigint;
  status: PetStatus;
}

const PET_FIELDS = { id: true, name: true, categoryId: true, status: true } as const;
/**
 * The reads of listPets and getPet: constant text, values only as parameters. Without a
 * status the primary key serves them, with one the (status, id) index, both in id order
 * (README, "Performance", shows the plans). bench/baseline.mjs sends the same statements.
 */
const PET_COLUMNS = 'SELECT "id", "name", "category_id" AS "categoryId", "status"::text AS "status" FROM "pets"';
const BY_STATUS = '"status" = CAST($1::text AS "PetStatus")';
export const PET_SQL = {
  list: `${PET_COLUMNS} ORDER BY "id" LIMIT $1`,
  listAfter: `${PET_COLUMNS} WHERE "id" > $1 ORDER BY "id" LIMIT $2`,
  listStatus: `${PET_COLUMNS} WHERE ${BY_STATUS} ORDER BY "id" LIMIT $2`,
  listStatusAfter: `${PET_COLUMNS} WHERE ${BY_STATUS} AND "id" > $2 ORDER BY "id" LIMIT $3`,
  get: `${PET_COLUMNS} WHERE "id" = $1`,
  // The INSERT Prisma generates for pet.create (bench/baseline.mjs sends it too), with the
  // columns named as the reads name them; created_at and updated_at as Prisma sets them.
  create:
    'INSERT INTO "pets" ("name", "category_id", "status", "created_at", "updated_at") VALUES ($1, $2, CAST($3::text AS "PetStatus"), $4, $5) RETURNING "id", "name", "category_id" AS "categoryId", "status"::text AS "status"',
} as const;

/** PET_SQL as prepared statements, named after their key (Database.read runs any statement that returns rows). */
const PET_READS = Object.fromEntries(
  Object.entries(PET_SQL).map(([name, text]) => [name, { name: `pets_${name}`, text }]),
) as Record<keyof typeof PET_SQL, PreparedRead>;

@Injectable()
export class PetsService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Animals in id order after `after`; one extra row tells whether a next page exists.
   *
   * The two reads of the hot path are SQL of our own, sent by the database's own driver as
   * prepared statements (Database.read), rather than through Prisma: the query builder of
   * findMany / findUnique cost about 170 µs of CPU per call more than the same statement as
   * raw SQL, and Prisma's raw-query path still re-parses and re-plans the statement on the
   * server and maps every row (README, "Performance"). The statements are constants with
   * bound parameters (PET_SQL); writes stay with Prisma.
   */
  async list({ limit, status, after }: PageRequest): Promise<PetPage> {
    const take = limit + 1;
    const db = this.prisma.database;
    const rows =
      status === undefined
        ? after === undefined
          ? await db.read<Pet>(PET_READS.list, [take])
          : await db.read<Pet>(PET_READS.listAfter, [after, take])
        : after === undefined
          ? await db.read<Pet>(PET_READS.listStatus, [status, take])
          : await db.read<Pet>(PET_READS.listStatusAfter, [status, after, take]);
    const more = rows.length > limit;
    const pets = more ? rows.slice(0, limit) : rows;
    return { pets, nextAfter: more ? pets[pets.length - 1].id : null };
  }

  /**
   * Stores an animal. `alongside` runs in the same transaction once the row exists (the
   * Idempotency-Key record): both commit, or neither does.
   *
   * Without it, the INSERT is one prepared statement on the database's own driver, like the
   * reads: Prisma's query interpreter cost about 150 µs of CPU per create over the same
   * statement (the bench's cost ledger, createPet: "database" 452 µs per request against the
   * raw baseline's 176 in all; README, "Performance"). With it, Prisma's interactive
   * transaction keeps the two writes atomic.
   */
  async create(pet: NewPet, alongside?: (tx: Prisma.TransactionClient, created: Pet) => Promise<void>): Promise<Pet> {
    if (!alongside) {
      const now = new Date();
      const [created] = await this.prisma.database.read<Pet>(PET_READS.create, [pet.name, pet.categoryId, pet.status, now, now]);
      return created;
    }
    return await this.prisma.$transaction(
      async (tx) => {
        const created = await tx.pet.create({ data: pet, select: PET_FIELDS });
        await alongside(tx, created);
        return created;
      },
      WRITE_TRANSACTION,
    );
  }

  async findOne(id: bigint): Promise<Pet | null> {
    const rows = await this.prisma.database.read<Pet>(PET_READS.get, [id]);
    return rows[0] ?? null;
  }
}
