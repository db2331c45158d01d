-- CreateEnum
CREATE TYPE "IdempotencyState" AS ENUM ('in_flight', 'completed');

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "api_key_id" BIGINT NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "fingerprint" CHAR(64) NOT NULL,
    "state" "IdempotencyState" NOT NULL,
    "claim_token" UUID NOT NULL,
    "claimed_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "response_status" INTEGER,
    "response_body" TEXT,
    "response_location" TEXT,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("api_key_id", "key"),
    -- Not expressible in schema.prisma: a completed key holds the response it replays.
    CONSTRAINT "idempotency_keys_response_check" CHECK (
        "state" = 'in_flight' OR ("response_status" IS NOT NULL AND "response_body" IS NOT NULL)
    )
);

-- CreateIndex
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");
