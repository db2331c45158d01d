import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import type { PreparedStatement } from '../database/database.js';
import { PrismaService } from '../database/prisma.service.js';
import { completedRecordValues, insertCompletedRecord } from '../idempotency/idempotency-keys.repository.js';
import type { CompletedRecord } from '../idempotency/idempotency.types.js';
import { stringifyJson } from '../json/json-codec.js';
import type { PetStatus } from './pet-status.js';

/** An int64 as the database driver gives it: a number while a double holds it exactly, else a bigint. */
export type Int64 = number | bigint;

export interface Pet {
  id: Int64;
  name: string;
  categoryId: Int64;
  status: PetStatus;
}

export interface NewPet {
  name: string;
  categoryId: bigint;
  status: PetStatus;
}

/**
 * The statements on pets: constant text, values only as parameters. Without a status the
 * primary key serves listPets in id order. With one, the statement asks for (status, id) order
 * over the range [status, status], which only the (status, id) index yields in order: the plan
 * reads the page's rows and no others. Written as `status = $1 ORDER BY id`, the planner may
 * walk the primary key and filter row by row, a scan of every older row when the status is
 * common overall but absent among the oldest ids (an aged catalogue; bench scenarios aged*).
 * Each status has its own statements, the status written in them as a constant (from the closed
 * PET_STATUSES, never from input): the planner then sees the value, in a generic plan too, and
 * estimates the range from its statistics instead of a default. ORDER BY names the table's
 * columns: a bare "status" would be the selected text, which no index orders. bench/baseline.mjs
 * sends the same statements.
 */
const PET_COLUMNS = 'SELECT "id", "name", "category_id" AS "categoryId", "status"::text AS "status" FROM "pets"';
const RETURNING_PET = 'RETURNING "id", "name", "category_id" AS "categoryId", "status"::text AS "status"';
const byStatus = (status: PetStatus, after: boolean) =>
  `${PET_COLUMNS} WHERE "status" >= '${status}' AND "status" <= '${status}'${after ? ' AND "id" > $1' : ''} ORDER BY "pets"."status", "pets"."id" LIMIT $${after ? 2 : 1}`;
export const PET_SQL = {
  list: `${PET_COLUMNS} ORDER BY "id" LIMIT $1`,
  listAfter: `${PET_COLUMNS} WHERE "id" > $1 ORDER BY "id" LIMIT $2`,
  listAvailable: byStatus('available', false),
  listAvailableAfter: byStatus('available', true),
  listPending: byStatus('pending', false),
  listPendingAfter: byStatus('pending', true),
  listSold: byStatus('sold', false),
  listSoldAfter: byStatus('sold', true),
  get: `${PET_COLUMNS} WHERE "id" = $1`,
  // created_at and updated_at are both the Clock's now ($4, $5).
  insert: `INSERT INTO "pets" ("name", "category_id", "status", "created_at", "updated_at") VALUES ($1, $2, CAST($3::text AS "PetStatus"), $4, $5) ${RETURNING_PET}`,
  // A create with its Idempotency-Key record, in one statement (one transaction): the id is drawn
  // first, so the record, written completed, holds the response with it; the pet is inserted only
  // when the record is (ON CONFLICT DO NOTHING on the key), and no row comes back otherwise.
  insertWithRecord: `WITH "new_id" AS (SELECT nextval('"pets_id_seq"') AS "id"),
  "record" AS (
    ${insertCompletedRecord(4, 5)})
  INSERT INTO "pets" ("id", "name", "category_id", "status", "created_at", "updated_at")
  SELECT "id", $1::text, $2::bigint, CAST($3::text AS "PetStatus"), $4::timestamptz, $4::timestamptz FROM "new_id", "record"
  ${RETURNING_PET}`,
} as const;

/** PET_SQL as prepared statements, named after their key (run by Database.query). */
const PET_STATEMENTS = Object.fromEntries(
  Object.entries(PET_SQL).map(([name, text]) => [name, { name: `pets_${name}`, text }]),
) as Record<keyof typeof PET_SQL, PreparedStatement>;
/** listPets' statements for a status: the first page, and the pages after a cursor. */
const BY_STATUS: Record<PetStatus, { first: PreparedStatement; after: PreparedStatement }> = {
  available: { first: PET_STATEMENTS.listAvailable, after: PET_STATEMENTS.listAvailableAfter },
  pending: { first: PET_STATEMENTS.listPending, after: PET_STATEMENTS.listPendingAfter },
  sold: { first: PET_STATEMENTS.listSold, after: PET_STATEMENTS.listSoldAfter },
};

/**
 * The JSON text of `pet` as the API answers it once stored, split where its id goes (the
 * response an Idempotency-Key record holds, ResponseAroundId). Keys in RETURNING_PET's order.
 */
export function petJsonAroundId(pet: NewPet): { bodyBeforeId: string; bodyAfterId: string } {
  const head = '{"id":0';
  const text = stringifyJson({ id: 0, name: pet.name, categoryId: pet.categoryId, status: pet.status });
  return { bodyBeforeId: '{"id":', bodyAfterId: text.slice(head.length) };
}

/**
 * Every statement on pets (PET_SQL): SQL of our own, sent by the database's own driver as
 * prepared statements (Database.query; why, ARCHITECTURE.md, "Data access"). The insert of an
 * Idempotency-Key claim runs the same INSERT inside Prisma's interactive transaction, beside the
 * claim's completion.
 */
@Injectable()
export class PetsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Up to `take` animals in id order after `after` (from the first without), of `status` if given. */
  async list(take: number, status: PetStatus | undefined, after: Int64 | undefined): Promise<Pet[]> {
    const db = this.prisma.database;
    const page =
      status === undefined ? { first: PET_STATEMENTS.list, after: PET_STATEMENTS.listAfter } : BY_STATUS[status];
    return after === undefined
      ? await db.query<Pet>(page.first, [take])
      : await db.query<Pet>(page.after, [after, take]);
  }

  /** One INSERT, stamped `now`. */
  async insert(pet: NewPet, now: Date): Promise<Pet> {
    const [created] = await this.prisma.database.query<Pet>(PET_STATEMENTS.insert, insertValues(pet, now));
    return created;
  }

  /** The same INSERT in the caller's Prisma transaction. */
  async insertIn(tx: Prisma.TransactionClient, pet: NewPet, now: Date): Promise<Pet> {
    const [created] = await tx.$queryRawUnsafe<Pet[]>(PET_SQL.insert, ...insertValues(pet, now));
    return created;
  }

  /** The animal and its key's completed record in one statement; null, storing nothing, when the key has a record. */
  async insertWithRecord(pet: NewPet, record: CompletedRecord): Promise<Pet | null> {
    const [created] = await this.prisma.database.query<Pet>(
      PET_STATEMENTS.insertWithRecord,
      insertWithRecordValues(pet, record),
    );
    return created ?? null;
  }

  async findById(id: bigint): Promise<Pet | null> {
    const rows = await this.prisma.database.query<Pet>(PET_STATEMENTS.get, [id]);
    return rows[0] ?? null;
  }
}

/** PET_SQL.insert's parameters: the animal, and `now` as created_at and updated_at. */
export function insertValues(pet: NewPet, now: Date): unknown[] {
  return [pet.name, pet.categoryId, pet.status, now, now];
}

/** PET_SQL.insertWithRecord's parameters: the animal, its record's instant, then the rest of its key's record. */
export function insertWithRecordValues(pet: NewPet, record: CompletedRecord): unknown[] {
  return [pet.name, pet.categoryId, pet.status, record.at, ...completedRecordValues(record)];
}
