-- What a key may do (docs/api-keys.md, "Scopes"): a subset of pets:read (listPets, getPet) and
-- pets:write (createPet). Keys issued before this column existed keep both, as new keys do
-- unless issued with fewer.
ALTER TABLE "api_keys" ADD COLUMN "scopes" TEXT[] NOT NULL DEFAULT ARRAY['pets:read', 'pets:write']::TEXT[];

ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_scopes_known"
    CHECK ("scopes" <@ ARRAY['pets:read', 'pets:write']::TEXT[] AND array_position("scopes", NULL) IS NULL);

-- A change of scopes is a change authentication sees: every instance drops the key from its cache
-- at its next poll of changed keys, as for a new plan or a revocation.
DROP TRIGGER "api_keys_changed_at" ON "api_keys";

CREATE TRIGGER "api_keys_changed_at"
    BEFORE UPDATE ON "api_keys"
    FOR EACH ROW
    WHEN ((OLD."hash", OLD."previous_hash", OLD."previous_expires_at", OLD."plan", OLD."per_minute", OLD."per_day", OLD."revoked_at", OLD."expires_at", OLD."scopes")
        IS DISTINCT FROM (NEW."hash", NEW."previous_hash", NEW."previous_expires_at", NEW."plan", NEW."per_minute", NEW."per_day", NEW."revoked_at", NEW."expires_at", NEW."scopes"))
    EXECUTE FUNCTION "api_keys_set_changed_at"();
