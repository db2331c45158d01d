-- Who made each change, by kind: an admin token (actor_token_id names it; actor is its name),
-- the key tool (actor is cli:<operating-system user>) or the service itself (actor is
-- system:<name>). `actor` stays the text an operator reads.
ALTER TABLE "audit_log"
    ADD COLUMN "actor_kind" VARCHAR(20),
    ADD COLUMN "actor_token_id" BIGINT;

-- Entries written before named their actor by text alone: cli:… was the key tool, system:… the
-- service, anything else an admin token's name (matched to the token, whose name is unique and
-- never reused; no id when no token has that name). The append-only trigger is set aside for
-- these two statements only, inside this migration's transaction.
ALTER TABLE "audit_log" DISABLE TRIGGER "audit_log_no_update_delete";

UPDATE "audit_log" SET "actor_kind" = CASE
    WHEN "actor" LIKE 'cli:%' THEN 'key_tool'
    WHEN "actor" LIKE 'system:%' THEN 'system'
    ELSE 'admin_token' END;

UPDATE "audit_log" AS a SET "actor_token_id" = t."id"
    FROM "admin_tokens" AS t
    WHERE a."actor_kind" = 'admin_token' AND t."name" = a."actor";

ALTER TABLE "audit_log" ENABLE TRIGGER "audit_log_no_update_delete";

ALTER TABLE "audit_log"
    ALTER COLUMN "actor_kind" SET NOT NULL,
    ADD CONSTRAINT "audit_log_actor_kind_check" CHECK ("actor_kind" IN ('admin_token', 'key_tool', 'system')),
    ADD CONSTRAINT "audit_log_actor_token_check" CHECK ("actor_kind" = 'admin_token' OR "actor_token_id" IS NULL);
