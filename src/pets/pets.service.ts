import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma/prisma.service.js';
import type { PetStatus } from './pet-status.js';

export interface Pet {
  id: bigint;
  name: string;
  categoryId: bigint;
  status: PetStatus;
}

export interface PetPage {
  pets: Pet[];
  /** Id of the last animal returned, when more animals follow it. */
  nextAfter: bigint | null;
}

export interface NewPet {
  name: string;
  categoryId: bigint;
  status: PetStatus;
}

const PET_FIELDS = { id: true, name: true, categoryId: true, status: true } as const;

@Injectable()
export class PetsService {
  constructor(private readonly prisma: PrismaService) {}

  /** Animals in id order after `after`; one extra row tells whether a next page exists. */
  async list(limit: number, status?: PetStatus, after?: bigint): Promise<PetPage> {
    const rows = await this.prisma.pet.findMany({
      select: PET_FIELDS,
      where: { status, id: after === undefined ? undefined : { gt: after } },
      orderBy: { id: 'asc' },
      take: limit + 1,
    });
    const more = rows.length > limit;
    const pets = more ? rows.slice(0, limit) : rows;
    return { pets, nextAfter: more ? pets[pets.length - 1].id : null };
  }

  create(pet: NewPet): Promise<Pet> {
    return this.prisma.pet.create({ data: pet, select: PET_FIELDS });
  }

  findOne(id: bigint): Promise<Pet | null> {
    return this.prisma.pet.findUnique({ where: { id }, select: PET_FIELDS });
  }
}
