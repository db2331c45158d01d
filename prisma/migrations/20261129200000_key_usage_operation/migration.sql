-- Usage per key, UTC hour and operation (listPets, createPet, getPet, or other: a /v1 path no
-- operation answers). Rows written before this column are kept whole under 'other', so every
-- sum over a key's hours or days stays what it was.
ALTER TABLE "key_usage" ADD COLUMN "operation" VARCHAR(20) NOT NULL DEFAULT 'other';
ALTER TABLE "key_usage" ALTER COLUMN "operation" DROP DEFAULT;
ALTER TABLE "key_usage" DROP CONSTRAINT "key_usage_pkey";
ALTER TABLE "key_usage" ADD CONSTRAINT "key_usage_pkey" PRIMARY KEY ("key_id", "hour", "operation");

-- The totals over all keys and the busiest keys read a range of hours: the index covers the
-- sums, so they are read from the index alone.
DROP INDEX "key_usage_hour_idx";
CREATE INDEX "key_usage_hour_idx" ON "key_usage"("hour") INCLUDE ("key_id", "requests", "limited");

-- The audit log filtered by actor or action, newest first (by key: audit_log_key_id_id_idx).
CREATE INDEX "audit_log_actor_id_idx" ON "audit_log"("actor", "id");
CREATE INDEX "audit_log_action_id_idx" ON "audit_log"("action", "id");

-- The key list filtered by plan, in id order; and searched by the first characters of a key.
CREATE INDEX "api_keys_plan_id_idx" ON "api_keys"("plan", "id");
CREATE INDEX "api_keys_prefix_idx" ON "api_keys"("prefix" text_pattern_ops);
