-- The key.expiring events announced: one row per key and notice (7d, 1d), so each is sent once
-- whichever instance sees it first.
CREATE TABLE "key_expiry_notices" (
    "key_id" BIGINT NOT NULL,
    "notice" VARCHAR(4) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "key_expiry_notices_pkey" PRIMARY KEY ("key_id", "notice"),
    CONSTRAINT "key_expiry_notices_notice_check" CHECK ("notice" IN ('7d', '1d')),
    CONSTRAINT "key_expiry_notices_key_id_fkey" FOREIGN KEY ("key_id")
        REFERENCES "api_keys"("id") ON DELETE CASCADE
);
