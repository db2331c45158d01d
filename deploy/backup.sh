#!/bin/sh
# A logical backup of the stack's database: pg_dump in the postgres container, custom format,
# with the database's own definition (--create: its grants and its roles' settings in it), to a
# file on this host. docs/operations.md, "Backup and restore".
#
#   deploy/backup.sh [FILE] [compose options: -p NAME, -f FILE, --env-file FILE]
#
# FILE defaults to backups/animal-store-<UTC time>.dump. Safe while the stack serves: pg_dump
# reads one consistent snapshot. Redis is not backed up (rate-limit counters only). COMPOSE
# overrides the compose command (docker compose, else docker-compose).
set -eu
file=
compose_args=
while [ $# -gt 0 ]; do
  case $1 in
    -p | -f | --project-name | --file | --env-file) compose_args="$compose_args $1 ${2:?$1 needs a value}"; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "backup: unknown option $1" >&2; exit 2 ;;
    *) file=$1; shift ;;
  esac
done
if [ -z "${COMPOSE:-}" ]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE=docker-compose; fi
fi
file=${file:-backups/animal-store-$(date -u +%Y%m%dT%H%M%SZ).dump}
mkdir -p "$(dirname "$file")"
umask 077
# shellcheck disable=SC2086,SC2016 # the compose command's words; $POSTGRES_* expand in the container
$COMPOSE --ansi never $compose_args exec -T postgres \
  sh -c 'exec pg_dump --format=custom --create --username "$POSTGRES_USER" "$POSTGRES_DB"' > "$file.partial"
mv "$file.partial" "$file"
echo "backup: $file ($(wc -c < "$file") bytes)"
