import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import { WRITE_TRANSACTION } from '../database/transactions.js';
import { PrismaService } from '../database/prisma.service.js';
import type { CompletedRecord } from '../idempotency/idempotency.types.js';
import { Clock } from '../time/clock.js';
import type { PageRequest } from './paging.js';
import { type Int64, type NewPet, type Pet, PetsRepository } from './pets.repository.js';

export interface PetPage {
  pets: Pet[];
  /** Id of the last animal returned, when more animals follow it. */
  nextAfter: Int64 | null;
}

/** Listing and storing animals (PetsRepository holds the statements). Timestamps come from the Clock. */
@Injectable()
export class PetsService {
  constructor(
    private readonly pets: PetsRepository,
    private readonly prisma: PrismaService,
    private readonly clock: Clock,
  ) {}

  /** Animals in id order after `after`; one extra row tells whether a next page exists. */
  async list({ limit, status, after }: PageRequest): Promise<PetPage> {
    const rows = await this.pets.list(limit + 1, status, after);
    const more = rows.length > limit;
    const pets = more ? rows.slice(0, limit) : rows;
    return { pets, nextAfter: more ? pets[pets.length - 1].id : null };
  }

  /** Stores an animal: one insert. */
  async insert(pet: NewPet): Promise<Pet> {
    return this.pets.insert(pet, this.clock.now());
  }

  /**
   * Stores an animal in a transaction of its own, and runs `alongside` in it once the row exists
   * (the completion of an Idempotency-Key claim): both commit, or neither does.
   */
  async insertAlongside(
    pet: NewPet,
    alongside: (tx: Prisma.TransactionClient, created: Pet) => Promise<void>,
  ): Promise<Pet> {
    return await this.prisma.$transaction(async (tx) => {
      const created = await this.pets.insertIn(tx, pet, this.clock.now());
      await alongside(tx, created);
      return created;
    }, WRITE_TRANSACTION);
  }

  /**
   * Stores an animal with the completed record of its Idempotency-Key, in one statement; null,
   * storing nothing, when the key already has a record.
   */
  async insertWithRecord(pet: NewPet, record: CompletedRecord): Promise<Pet | null> {
    return this.pets.insertWithRecord(pet, record);
  }

  async findOne(id: bigint): Promise<Pet | null> {
    return this.pets.findById(id);
  }
}
