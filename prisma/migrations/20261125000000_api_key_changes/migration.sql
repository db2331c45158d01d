-- When a key last changed, after it was issued, in a way authentication sees (its secrets, plan,
-- limits, revocation, expiry): set by the trigger on such an update, never by a record of use
-- (last_used_at); null while the key is as issued. Every instance polls the keys changed since
-- its last poll to drop them from its cache (src/auth/auth.service.ts).
ALTER TABLE "api_keys" ADD COLUMN "changed_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "api_keys_changed_at_idx" ON "api_keys"("changed_at");

CREATE FUNCTION "api_keys_set_changed_at"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW."changed_at" := CURRENT_TIMESTAMP;
    RETURN NEW;
END;
$$;

CREATE TRIGGER "api_keys_changed_at"
    BEFORE UPDATE ON "api_keys"
    FOR EACH ROW
    WHEN ((OLD."hash", OLD."previous_hash", OLD."previous_expires_at", OLD."plan", OLD."per_minute", OLD."per_day", OLD."revoked_at", OLD."expires_at")
        IS DISTINCT FROM (NEW."hash", NEW."previous_hash", NEW."previous_expires_at", NEW."plan", NEW."per_minute", NEW."per_day", NEW."revoked_at", NEW."expires_at"))
    EXECUTE FUNCTION "api_keys_set_changed_at"();
