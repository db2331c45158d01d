-- CreateEnum
CREATE TYPE "ApiKeyPlan" AS ENUM ('free', 'pro', 'business', 'enterprise');

-- CreateTable
CREATE TABLE "api_keys" (
    "id" BIGSERIAL NOT NULL,
    "name" VARCHAR(100) NOT NULL,
    "plan" "ApiKeyPlan" NOT NULL,
    "per_minute" INTEGER,
    "per_day" INTEGER,
    "prefix" VARCHAR(16) NOT NULL,
    "hash" CHAR(64) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id"),
    -- Not expressible in schema.prisma: an enterprise key carries both of its own limits,
    -- any other plan none (its limits come from the plan table).
    CONSTRAINT "api_keys_limits_check" CHECK (
        ("plan" = 'enterprise' AND "per_minute" > 0 AND "per_day" > 0)
        OR ("plan" <> 'enterprise' AND "per_minute" IS NULL AND "per_day" IS NULL)
    )
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");
