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
name=backup
. "$(dirname "$0")/lib.sh"
one_argument "$@"
file=${arg:-backups/animal-store-$(date -u +%Y%m%dT%H%M%SZ).dump}
mkdir -p "$(dirname "$file")"
umask 077
# shellcheck disable=SC2016 # $POSTGRES_* expand in the container
compose exec -T postgres \
  sh -c 'exec pg_dump --format=custom --create --username "$POSTGRES_USER" "$POSTGRES_DB"' > "$file.partial"
mv "$file.partial" "$file"
echo "backup: $file ($(wc -c < "$file") bytes)"
