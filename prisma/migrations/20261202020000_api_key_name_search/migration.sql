-- The key list searched by a part of the name, in any case (ILIKE '%…%'), through an index of
-- the names' trigrams; with the prefix index, a search reads only the keys it matches.
CREATE EXTENSION IF NOT EXISTS "pg_trgm";
CREATE INDEX "api_keys_name_trgm_idx" ON "api_keys" USING GIN ("name" gin_trgm_ops);
