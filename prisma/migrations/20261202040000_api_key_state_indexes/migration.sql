-- The console's keys by state counted from indexes: the revoked keys, and the expiry dates of the
-- keys not revoked (expired and expiring). Partial, so each holds only the keys it counts.
CREATE INDEX "api_keys_revoked_at_idx" ON "api_keys" ("revoked_at") WHERE "revoked_at" IS NOT NULL;
CREATE INDEX "api_keys_live_expires_at_idx" ON "api_keys" ("expires_at")
    WHERE "revoked_at" IS NULL AND "expires_at" IS NOT NULL;
