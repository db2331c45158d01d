/** The /v1 operations an API key is counted for, by operationId: a key's usage is split by them. */
export const KEY_OPERATIONS = ['listPets', 'createPet', 'getPet'] as const;
export type KeyOperation = (typeof KEY_OPERATIONS)[number];
