#!/bin/sh
# Run once by the postgres image on a new data directory (/docker-entrypoint-initdb.d), as the
# owner the image creates (POSTGRES_USER, a superuser): creates the role the API connects as,
# APP_DB_USER, with only what the API needs. The migrate job keeps connecting as the owner, so
# the tables it creates are the owner's; the default privileges below grant the API role
# reading and writing rows in them (and drawing ids from their sequences), never changing or
# dropping them, creating others, or anything a superuser can do on the server.
#
# On an existing data directory this script does not run: run it yourself once, e.g.
#   docker compose exec -e APP_DB_USER=... -e APP_DB_PASSWORD=... postgres \
#     sh /docker-entrypoint-initdb.d/10-app-role.sh
# (and GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public, and USAGE, SELECT ON
# ALL SEQUENCES, to the role for tables created before it; then
# REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_log FROM the role, which may only read it and
# append through append_audit_entry()).
#
# The audit log stays append-only for the API's role: the migrations take INSERT, UPDATE, DELETE
# and TRUNCATE on audit_log from every role but its owner (the default privileges below grant them
# on every new table), triggers refuse them whoever connects, and entries go in through the
# database function append_audit_entry().
set -eu
: "${APP_DB_USER:?set APP_DB_USER}"
# The password: APP_DB_PASSWORD when given, else none yet (the compose stack's app-role job sets it,
# and adds the twin login role APP_DB_USER_b, a member of this one, for password rotations).
psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v app_user="$APP_DB_USER" -v app_password="${APP_DB_PASSWORD:-}" -v owner="$POSTGRES_USER" -v db="$POSTGRES_DB" <<'SQL'
CREATE ROLE :"app_user" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION;
SELECT :'app_password' <> '' AS has_password \gset
\if :has_password
ALTER ROLE :"app_user" PASSWORD :'app_password';
\endif
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"db" TO :"app_user";
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO :"app_user";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"app_user";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO :"app_user";
SQL
