#!/bin/sh
# Restores a backup made by deploy/backup.sh into the stack's PostgreSQL, replacing the database:
# the instances are stopped (the API answers 503 meanwhile), the database dropped and created
# again from the dump (tables, rows, the audit log's chain and triggers, grants), then the
# instances started; it returns once HAProxy has them UP again. docs/operations.md, "Backup and restore".
#
#   deploy/restore.sh FILE [compose options: -p NAME, -f FILE, --env-file FILE]
#
# The API's role (APP_DB_USER) must exist in the server, as it does in the stack's postgres
# (deploy/postgres/10-app-role.sh makes it on a new volume). COMPOSE overrides the compose command.
set -eu
name=restore
. "$(dirname "$0")/lib.sh"
one_argument "$@"
file=$arg
[ -n "$file" ] && [ -s "$file" ] || fail 2 "give the backup file (deploy/backup.sh made it)"

echo "restore: stopping the instances"
compose stop app
echo "restore: replacing the database from $file"
# shellcheck disable=SC2016 # $POSTGRES_* expand in the container
compose exec -T postgres sh -c '
  set -e
  dropdb --if-exists --force --username "$POSTGRES_USER" "$POSTGRES_DB"
  pg_restore --exit-on-error --create --dbname postgres --username "$POSTGRES_USER"
' < "$file"
echo "restore: starting the instances"
compose start app
# Done only when the balancer serves again: each instance UP at HAProxy with a passed check.
for id in $(instance_ids); do until_up "$id"; done
echo "restore: done, serving; check it with: $COMPOSE exec -T --index $(instance_index) app node dist/cli/apikey.js audit verify"
