#!/bin/sh
# Writes PgBouncer's user list from the environment (the API's role and password), then runs
# PgBouncer in the foreground as the container's process.
set -eu
: "${APP_DB_USER:?APP_DB_USER is required}"
: "${APP_DB_PASSWORD:?APP_DB_PASSWORD is required}"
umask 077
printf '"%s" "%s"\n' "$APP_DB_USER" "$APP_DB_PASSWORD" > /etc/pgbouncer/userlist.txt
exec pgbouncer /etc/pgbouncer/pgbouncer.ini
