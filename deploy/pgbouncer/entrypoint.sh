#!/bin/sh
# Runs PgBouncer in the foreground as the container's process. Its user list is the file the
# compose stack's app-role job writes (deploy/postgres/app-role-password.sh); SIGHUP re-reads it.
set -eu
if [ ! -s /etc/pgbouncer/auth/userlist.txt ]; then
  echo "pgbouncer: /etc/pgbouncer/auth/userlist.txt is missing: the app-role job writes it (docker compose up app-role)" >&2
  exit 1
fi
exec pgbouncer /etc/pgbouncer/pgbouncer.ini
