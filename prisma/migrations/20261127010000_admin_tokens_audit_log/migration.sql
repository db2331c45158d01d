-- Admin tokens: named bearer tokens of the admin API, issued by the key tool. Only a hash of
-- each is stored (src/auth/admin-token-format.ts); a name is never reused, so the audit log's
-- actor names one token for good.
CREATE TABLE "admin_tokens" (
    "id" BIGSERIAL NOT NULL,
    "name" VARCHAR(100) NOT NULL,
    "prefix" VARCHAR(16) NOT NULL,
    "hash" CHAR(64) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "admin_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "admin_tokens_name_key" ON "admin_tokens"("name");

-- CreateIndex
CREATE UNIQUE INDEX "admin_tokens_hash_key" ON "admin_tokens"("hash");

-- The audit log: one entry per change to an API key or an admin token, appended in the
-- transaction of the change. `changes` holds each changed field before and after, never a
-- secret or a hash.
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" VARCHAR(200) NOT NULL,
    "action" VARCHAR(40) NOT NULL,
    "key_id" BIGINT,
    "admin_token_id" BIGINT,
    "changes" JSONB NOT NULL,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "audit_log_action_check" CHECK ("action" IN (
        'key.created', 'key.updated', 'key.rolled', 'key.revoked',
        'admin_token.created', 'admin_token.revoked'))
);

-- CreateIndex
CREATE INDEX "audit_log_key_id_id_idx" ON "audit_log"("key_id", "id");

-- Append-only, whoever connects: an UPDATE, DELETE or TRUNCATE of audit_log raises (SQLSTATE
-- 42501, insufficient_privilege).
CREATE FUNCTION "audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % is not allowed', TG_OP USING ERRCODE = '42501';
END;
$$;

CREATE TRIGGER "audit_log_no_update_delete"
    BEFORE UPDATE OR DELETE ON "audit_log"
    FOR EACH ROW
    EXECUTE FUNCTION "audit_log_append_only"();

CREATE TRIGGER "audit_log_no_truncate"
    BEFORE TRUNCATE ON "audit_log"
    FOR EACH STATEMENT
    EXECUTE FUNCTION "audit_log_append_only"();

-- Roles other than the owner keep only SELECT and INSERT on audit_log (the default privileges
-- of deploy/postgres/10-app-role.sh grant the API's role UPDATE and DELETE on every new table).
DO $$
DECLARE
    grantee_name TEXT;
BEGIN
    FOR grantee_name IN
        SELECT DISTINCT "grantee" FROM information_schema.role_table_grants
        WHERE "table_schema" = current_schema() AND "table_name" = 'audit_log'
          AND "privilege_type" IN ('UPDATE', 'DELETE', 'TRUNCATE') AND "grantee" <> current_user
    LOOP
        EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON "audit_log" FROM %I', grantee_name);
    END LOOP;
END;
$$;
