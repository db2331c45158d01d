#!/bin/sh
# Run by the compose stack's one-shot `app-role` job before PgBouncer starts: sets the password of
# the API's role (APP_DB_USER, made by 10-app-role.sh on a new volume) to APP_DB_PASSWORD, as the
# database's owner over the network. So the password lives in .env alone: changing it changes this
# job and the services that log in with it, never the postgres service (which would restart).
# docs/operations.md, "Rotating secrets".
set -eu
: "${APP_DB_USER:?set APP_DB_USER}" "${APP_DB_PASSWORD:?set APP_DB_PASSWORD}"
export PGPASSWORD="$POSTGRES_PASSWORD"
psql -v ON_ERROR_STOP=1 --no-psqlrc -q -h "${POSTGRES_HOST:-postgres}" --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v app_user="$APP_DB_USER" -v app_password="$APP_DB_PASSWORD" <<'SQL'
ALTER ROLE :"app_user" PASSWORD :'app_password';
SQL
echo "app-role: the password of $APP_DB_USER is set"
