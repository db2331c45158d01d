-- The key.quota_threshold events announced: one row per key, UTC day and threshold (80, 100),
-- so each is sent once whichever instance sees the crossing first, and again by none after a
-- restart.
CREATE TABLE "key_quota_notices" (
    "key_id" BIGINT NOT NULL,
    "day" DATE NOT NULL,
    "threshold" SMALLINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "key_quota_notices_pkey" PRIMARY KEY ("key_id", "day", "threshold"),
    CONSTRAINT "key_quota_notices_threshold_check" CHECK ("threshold" IN (80, 100)),
    CONSTRAINT "key_quota_notices_key_id_fkey" FOREIGN KEY ("key_id")
        REFERENCES "api_keys"("id") ON DELETE CASCADE
);
