#!/bin/sh
# Restores a backup made by deploy/backup.sh into the stack's PostgreSQL, replacing the database:
# the instances are stopped (the API answers 503 meanwhile), the database dropped and created
# again from the dump (tables, rows, the audit log's chain and triggers, grants), then the
# instances started. docs/operations.md, "Backup and restore".
#
#   deploy/restore.sh FILE [compose options: -p NAME, -f FILE, --env-file FILE]
#
# The API's role (APP_DB_USER) must exist in the server, as it does in the stack's postgres
# (deploy/postgres/10-app-role.sh makes it on a new volume). COMPOSE overrides the compose command.
set -eu
file=
compose_args=
while [ $# -gt 0 ]; do
  case $1 in
    -p | -f | --project-name | --file | --env-file) compose_args="$compose_args $1 ${2:?$1 needs a value}"; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "restore: unknown option $1" >&2; exit 2 ;;
    *) file=$1; shift ;;
  esac
done
[ -n "$file" ] && [ -s "$file" ] || { echo "restore: give the backup file (deploy/backup.sh made it)" >&2; exit 2; }
if [ -z "${COMPOSE:-}" ]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE=docker-compose; fi
fi
# shellcheck disable=SC2086 # the compose command's words
compose() { $COMPOSE --ansi never $compose_args "$@"; }
instances=$(compose config --services | grep -E '^app[0-9]+$' || true)

echo "restore: stopping$(printf ' %s' $instances)"
# shellcheck disable=SC2086
compose stop $instances
echo "restore: replacing the database from $file"
# shellcheck disable=SC2016 # $POSTGRES_* expand in the container
compose exec -T postgres sh -c '
  set -e
  dropdb --if-exists --force --username "$POSTGRES_USER" "$POSTGRES_DB"
  pg_restore --exit-on-error --create --dbname postgres --username "$POSTGRES_USER"
' < "$file"
echo "restore: starting$(printf ' %s' $instances)"
# shellcheck disable=SC2086
compose start $instances
echo "restore: done; check it with: $COMPOSE exec -T app1 node dist/cli/apikey.js audit verify"
