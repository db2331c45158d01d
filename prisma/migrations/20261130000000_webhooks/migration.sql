-- Webhook endpoints (docs/webhooks.md) and their deliveries. The signing secrets are stored
-- encrypted (AES-256-GCM with WEBHOOK_SECRET_KEY); the previous one signs too until its expiry.
CREATE TABLE "webhook_endpoints" (
    "id" BIGSERIAL NOT NULL,
    "url" VARCHAR(2048) NOT NULL,
    "events" TEXT[] NOT NULL,
    "description" VARCHAR(500),
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "secret" TEXT NOT NULL,
    "previous_secret" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- One event sent to one endpoint: the body signed on every attempt, where it stands, and the
-- outcome of its last attempt. The job queue (pg-boss, its own schema) holds the attempts to make.
CREATE TABLE "webhook_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "endpoint_id" BIGINT NOT NULL,
    "message_id" VARCHAR(64) NOT NULL,
    "event" VARCHAR(40) NOT NULL,
    "payload" TEXT NOT NULL,
    "state" VARCHAR(10) NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status" INTEGER,
    "last_error" VARCHAR(500),
    "next_attempt_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_deliveries_state_check" CHECK ("state" IN ('pending', 'succeeded', 'failed')),
    CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id")
        REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE
);

CREATE UNIQUE INDEX "webhook_deliveries_message_id_key" ON "webhook_deliveries"("message_id");
CREATE INDEX "webhook_deliveries_endpoint_id_id_idx" ON "webhook_deliveries"("endpoint_id", "id");
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries"("created_at") WHERE "state" = 'pending';
