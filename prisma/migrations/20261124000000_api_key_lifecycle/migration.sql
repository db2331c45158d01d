-- Key lifecycle: an expiry, and the secret a roll replaced, valid until the end of its overlap.
ALTER TABLE "api_keys" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
ALTER TABLE "api_keys" ADD COLUMN "previous_hash" CHAR(64);
ALTER TABLE "api_keys" ADD COLUMN "previous_expires_at" TIMESTAMPTZ(3);
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_previous_check" CHECK (
    ("previous_hash" IS NULL) = ("previous_expires_at" IS NULL)
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_previous_hash_key" ON "api_keys"("previous_hash");
