/** Availability of an animal (docs/api.md, "Requests"). Mirrors the Prisma enum. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];
