import { Inject, Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client.js';
import { publicUrlsConfig, type PublicUrlsConfig } from '../config/public-urls.config.js';
import { WRITE_TRANSACTION } from '../database/transactions.js';
import { PrismaService } from '../database/prisma.service.js';
import type { IdempotentCall } from '../idempotency/idempotent-call.js';
import { Clock } from '../time/clock.js';
import type { PageRequest } from './paging.js';
import { type Int64, type NewPet, type Pet, petJsonAroundId, PetsRepository } from './pets.repository.js';

export interface PetPage {
  pets: Pet[];
  /** Id of the last animal returned, when more animals follow it. */
  nextAfter: Int64 | null;
}

/** A stored animal and its URL (the Location of the 201). */
export interface CreatedPet {
  pet: Pet;
  location: string;
}

/**
 * Listing and storing animals (PetsRepository holds the statements), the create with its
 * Idempotency-Key included. Timestamps come from the Clock.
 */
@Injectable()
export class PetsService {
  constructor(
    private readonly pets: PetsRepository,
    private readonly prisma: PrismaService,
    private readonly clock: Clock,
    @Inject(publicUrlsConfig.token) private readonly urls: PublicUrlsConfig,
  ) {}

  /** Animals in id order after `after`; one extra row tells whether a next page exists. */
  async list({ limit, status, after }: PageRequest): Promise<PetPage> {
    const rows = await this.pets.list(limit + 1, status, after);
    const more = rows.length > limit;
    const pets = more ? rows.slice(0, limit) : rows;
    return { pets, nextAfter: more ? pets[pets.length - 1].id : null };
  }

  /**
   * Stores an animal: one insert without an Idempotency-Key. With one, the animal and the key's
   * completed record in one statement when the key is new; otherwise the key decides (a replay,
   * 409, 422), or, expired or abandoned, is claimed and completed in the transaction that stores
   * the animal.
   */
  async create(pet: NewPet, idempotency?: IdempotentCall): Promise<CreatedPet> {
    const created = idempotency
      ? await this.createOnce(pet, idempotency)
      : await this.pets.insert(pet, this.clock.now());
    return { pet: created, location: this.locationOf(created.id) };
  }

  private async createOnce(pet: NewPet, idempotency: IdempotentCall): Promise<Pet> {
    const record = idempotency.record({ status: 201, ...petJsonAroundId(pet), locationBeforeId: this.locationOf('') });
    const created = await this.pets.insertWithRecord(pet, record);
    if (created) return created;
    const claim = await idempotency.claim();
    return await this.insertAlongside(pet, (tx, stored) =>
      claim.complete(tx, { status: 201, body: stored, location: this.locationOf(stored.id) }),
    );
  }

  /**
   * Stores an animal in a transaction of its own, and runs `alongside` in it once the row exists
   * (the completion of an Idempotency-Key claim): both commit, or neither does.
   */
  private async insertAlongside(
    pet: NewPet,
    alongside: (tx: Prisma.TransactionClient, created: Pet) => Promise<void>,
  ): Promise<Pet> {
    return await this.prisma.$transaction(async (tx) => {
      const created = await this.pets.insertIn(tx, pet, this.clock.now());
      await alongside(tx, created);
      return created;
    }, WRITE_TRANSACTION);
  }

  private locationOf(id: Pet['id'] | ''): string {
    return `${this.urls.publicBaseUrl}/pets/${id}`;
  }

  async findOne(id: bigint): Promise<Pet | null> {
    return this.pets.findById(id);
  }
}
