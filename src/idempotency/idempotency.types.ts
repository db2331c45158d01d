// The shapes an Idempotency-Key's record takes on its way through the feature: shared by the
// service, its repository, IdempotentCall and the statement that creates a row with its record
// (PetsRepository), so none of them imports another for a type.

/** Who sent which key with which request. */
export interface IdempotencyScope {
  apiKeyId: bigint;
  key: string;
  fingerprint: string;
}

/** The response an idempotent request answered, replayed as it was sent. */
export interface StoredResponse {
  status: number;
  /** JSON text, exactly as first sent. */
  body: string;
  location: string | null;
}

/** What the first response of a request will be, recorded with the work it describes. */
export interface ResponseToStore {
  status: number;
  body: unknown;
  location?: string;
}

/**
 * A response whose body and Location hold the id of the row the request creates, known only
 * once the row is inserted: the body is bodyBeforeId + id + bodyAfterId, the Location
 * locationBeforeId + id (none when null).
 */
export interface ResponseAroundId {
  status: number;
  bodyBeforeId: string;
  bodyAfterId: string;
  locationBeforeId: string | null;
}

/** The columns of a key's record written completed by the statement that does the work. */
export interface CompletedRecord extends ResponseAroundId {
  apiKeyId: bigint;
  key: string;
  fingerprint: string;
  claimToken: string;
  at: Date;
  expiresAt: Date;
}
