-- Sessions of the operator console: the cookie holds a random id, this table only its SHA-256
-- hash, the admin token it belongs to and its times. A session dies with its token.
CREATE TABLE "admin_sessions" (
    "id_hash" CHAR(64) NOT NULL,
    "admin_token_id" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "ends_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "admin_sessions_pkey" PRIMARY KEY ("id_hash"),
    CONSTRAINT "admin_sessions_admin_token_id_fkey" FOREIGN KEY ("admin_token_id")
        REFERENCES "admin_tokens"("id") ON DELETE CASCADE
);

CREATE INDEX "admin_sessions_admin_token_id_idx" ON "admin_sessions"("admin_token_id");
