-- A hash chain over the audit log (docs/security.md, "The audit log"): each entry holds the hash
-- of the entry before it (prev_hash; 64 zeros for the first) and its own hash, SHA-256 over
-- prev_hash and its fields. `npm run apikey -- audit verify` recomputes it (src/auth/audit-chain.ts
-- computes the same text as audit_entry_canonical) and names the first entry changed, removed
-- or inserted out of order.
ALTER TABLE "audit_log"
    ADD COLUMN "prev_hash" CHAR(64),
    ADD COLUMN "hash" CHAR(64);

-- The text an entry's hash covers: each field as <length in UTF-8 bytes>:<text> and a newline,
-- ~ and a newline for null; the instant in UTC to the millisecond, changes as jsonb's own text.
CREATE FUNCTION "audit_entry_canonical"(
    "prev_hash" TEXT, "id" BIGINT, "at" TIMESTAMPTZ, "actor_kind" TEXT, "actor" TEXT,
    "actor_token_id" BIGINT, "action" TEXT, "key_id" BIGINT, "admin_token_id" BIGINT, "changes" JSONB
) RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT string_agg(CASE WHEN f IS NULL THEN '~' ELSE octet_length(f) || ':' || f END || E'\n', '' ORDER BY n)
    FROM unnest(ARRAY[
        "prev_hash", "id"::text, to_char("at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        "actor_kind", "actor", "actor_token_id"::text, "action", "key_id"::text, "admin_token_id"::text,
        "changes"::text
    ]) WITH ORDINALITY AS t(f, n)
$$;

CREATE FUNCTION "audit_entry_hash"(
    "prev_hash" TEXT, "id" BIGINT, "at" TIMESTAMPTZ, "actor_kind" TEXT, "actor" TEXT,
    "actor_token_id" BIGINT, "action" TEXT, "key_id" BIGINT, "admin_token_id" BIGINT, "changes" JSONB
) RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT encode(sha256(convert_to("audit_entry_canonical"(
        "prev_hash", "id", "at", "actor_kind", "actor", "actor_token_id", "action", "key_id",
        "admin_token_id", "changes"), 'UTF8')), 'hex')
$$;

-- The chain over the entries written before, in id order. The append-only trigger is set aside
-- for this statement only, inside this migration's transaction.
ALTER TABLE "audit_log" DISABLE TRIGGER "audit_log_no_update_delete";

DO $$
DECLARE
    entry RECORD;
    previous TEXT := repeat('0', 64);
BEGIN
    FOR entry IN SELECT * FROM "audit_log" ORDER BY "id" LOOP
        UPDATE "audit_log" SET
            "prev_hash" = previous,
            "hash" = "audit_entry_hash"(previous, entry."id", entry."at", entry."actor_kind", entry."actor",
                entry."actor_token_id", entry."action", entry."key_id", entry."admin_token_id", entry."changes")
        WHERE "id" = entry."id"
        RETURNING "hash" INTO previous;
    END LOOP;
END;
$$;

ALTER TABLE "audit_log" ENABLE TRIGGER "audit_log_no_update_delete";

ALTER TABLE "audit_log"
    ALTER COLUMN "prev_hash" SET NOT NULL,
    ALTER COLUMN "hash" SET NOT NULL;

-- The one way in: appends are serialised by the table lock (held to the end of the caller's
-- transaction, so the next append sees this one), the id comes from the sequence in that order,
-- `at` is the clock's time (never before the last entry's), and the hash chains to the last
-- entry. SECURITY DEFINER: it inserts as the owner, so other roles need no INSERT on the table.
-- Read committed only: under a snapshot taken before the lock, the last entry could be missed
-- and the chain fork.
CREATE FUNCTION "append_audit_entry"(
    "p_actor_kind" TEXT, "p_actor" TEXT, "p_actor_token_id" BIGINT, "p_action" TEXT,
    "p_key_id" BIGINT, "p_admin_token_id" BIGINT, "p_changes" JSONB
) RETURNS BIGINT LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    last_hash TEXT;
    last_at TIMESTAMPTZ;
    new_id BIGINT;
    new_at TIMESTAMPTZ;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'append_audit_entry runs in read committed transactions only, not %',
            current_setting('transaction_isolation') USING ERRCODE = '25000';
    END IF;
    LOCK TABLE "audit_log" IN SHARE ROW EXCLUSIVE MODE;
    SELECT "hash", "at" INTO last_hash, last_at FROM "audit_log" ORDER BY "id" DESC LIMIT 1;
    new_id := nextval(pg_get_serial_sequence('"audit_log"', 'id'));
    new_at := GREATEST(clock_timestamp()::timestamptz(3), last_at);
    last_hash := COALESCE(last_hash, repeat('0', 64));
    PERFORM set_config('animal_store.audit_append', 'on', true);
    INSERT INTO "audit_log" ("id", "at", "actor_kind", "actor", "actor_token_id", "action", "key_id",
                             "admin_token_id", "changes", "prev_hash", "hash")
    VALUES (new_id, new_at, p_actor_kind, p_actor, p_actor_token_id, p_action, p_key_id, p_admin_token_id,
            p_changes, last_hash,
            "audit_entry_hash"(last_hash, new_id, new_at, p_actor_kind, p_actor, p_actor_token_id, p_action,
                               p_key_id, p_admin_token_id, p_changes));
    PERFORM set_config('animal_store.audit_append', 'off', true);
    RETURN new_id;
END;
$$;

-- Any other INSERT is refused, whoever connects (the owner included): the function above marks
-- its own insert for this trigger.
CREATE FUNCTION "audit_log_append_through_function"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('animal_store.audit_append', true) IS DISTINCT FROM 'on' THEN
        RAISE EXCEPTION 'audit_log takes entries only through append_audit_entry()' USING ERRCODE = '42501';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER "audit_log_append_only_through_function"
    BEFORE INSERT ON "audit_log"
    FOR EACH ROW
    EXECUTE FUNCTION "audit_log_append_through_function"();

-- Roles other than the owner keep only SELECT on audit_log; they append through the function.
DO $$
DECLARE
    grantee_name TEXT;
BEGIN
    FOR grantee_name IN
        SELECT DISTINCT "grantee" FROM information_schema.role_table_grants
        WHERE "table_schema" = current_schema() AND "table_name" = 'audit_log'
          AND "privilege_type" = 'INSERT' AND "grantee" <> current_user
    LOOP
        EXECUTE format('REVOKE INSERT ON "audit_log" FROM %I', grantee_name);
    END LOOP;
END;
$$;
