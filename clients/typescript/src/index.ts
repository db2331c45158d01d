export { AnimalStoreClient } from './client.js';
export type {
  AnimalStoreClientOptions,
  CallOptions,
  CreatePetOptions,
  CredentialsRevocationReceipt,
  DeprecationNotice,
  ListPetsQuery,
  NewPet,
  Pet,
  PetStatus,
  PetsPage,
  RateLimit,
} from './client.js';
export { AnimalStoreError, InsufficientScopeError } from './errors.js';
export type { ErrorCode, ErrorDetail, RateLimitState } from './errors.js';
export type { RetryOptions } from './retry.js';
export type { components, operations, paths } from './generated/schema.js';
