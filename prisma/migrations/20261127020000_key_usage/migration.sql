-- CreateTable
CREATE TABLE "key_usage" (
    "key_id" BIGINT NOT NULL,
    "hour" TIMESTAMPTZ(3) NOT NULL,
    "requests" BIGINT NOT NULL,
    "limited" BIGINT NOT NULL,

    CONSTRAINT "key_usage_pkey" PRIMARY KEY ("key_id", "hour")
);

-- CreateIndex
CREATE INDEX "key_usage_hour_idx" ON "key_usage"("hour");
