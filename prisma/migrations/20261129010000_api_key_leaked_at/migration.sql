-- When a leak of the key was first reported (POST /v1/credentials/revoke, GitHub secret scanning):
-- null while none was. A report changes nothing once it is set.
ALTER TABLE "api_keys" ADD COLUMN "leaked_at" TIMESTAMPTZ(3);
