/**
 * Bounds of an interactive write transaction (Prisma's $transaction): how long it may wait for a
 * connection, and how long it may run before Prisma rolls it back. The create with an
 * Idempotency-Key runs in one (PetsService.insertAlongside); an idempotency claim outlives it by far
 * (IN_FLIGHT_TIMEOUT_MS), so a claim is never taken over while its transaction can still commit.
 */
export const WRITE_TRANSACTION = { maxWait: 5_000, timeout: 15_000 } as const;
