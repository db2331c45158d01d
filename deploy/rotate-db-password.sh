#!/bin/sh
# Rotates the API's database password (APP_DB_PASSWORD) of the compose stack. Not without an
# interruption: the instances and PgBouncer share the password and PgBouncer holds one per role, so
# PgBouncer and the instances switch together (about 10 to 20 s of 503s). Do it in a quiet moment.
# docs/operations.md, "Rotating secrets".
#
#   deploy/rotate-db-password.sh [NEW] [compose options: -p NAME, -f FILE, --env-file FILE]
#
# 1. NEW (default: 48 random hex digits; letters and digits only, it goes into a URL) is written
#    to .env.
# 2. The one-shot `app-role` job sets it on the role in PostgreSQL (open connections keep working).
# 3. PgBouncer and every instance are recreated with it at once; the script waits until HAProxy
#    reports each instance UP.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
new=
env_file=.env
compose_args=
while [ $# -gt 0 ]; do
  case $1 in
    --env-file) env_file=${2:?--env-file needs a value}; compose_args="$compose_args $1 $2"; shift 2 ;;
    -p | -f | --project-name | --file) compose_args="$compose_args $1 ${2:?$1 needs a value}"; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "rotate-db-password: unknown option $1" >&2; exit 2 ;;
    *) new=$1; shift ;;
  esac
done
new=${new:-$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')}
case $new in '' | *[!A-Za-z0-9]*) echo "rotate-db-password: the password must be letters and digits" >&2; exit 2 ;; esac
if [ -z "${COMPOSE:-}" ]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE=docker-compose; fi
fi
if [ -z "${ENGINE:-}" ]; then
  if command -v docker >/dev/null 2>&1; then ENGINE=docker; else ENGINE=podman; fi
fi
# shellcheck disable=SC2086
compose() { $COMPOSE --ansi never $compose_args "$@"; }
say() { printf 'rotate-db-password: %s (%s)\n' "$*" "$(date -u +%T)"; }

touch "$env_file"
if grep -q '^#\{0,1\} \{0,1\}APP_DB_PASSWORD=' "$env_file"; then
  sed -i "s/^#\{0,1\} \{0,1\}APP_DB_PASSWORD=.*/APP_DB_PASSWORD=$new/" "$env_file"
else
  printf 'APP_DB_PASSWORD=%s\n' "$new" >> "$env_file"
fi
say "APP_DB_PASSWORD written to $env_file"
compose up -d --no-deps app-role >/dev/null
id=$(compose ps -q app-role | head -1)
while [ "$($ENGINE inspect --format '{{.State.Status}}' "$id")" != exited ]; do sleep 1; done
code=$($ENGINE inspect --format '{{.State.ExitCode}}' "$id")
if [ "$code" != 0 ]; then
  compose logs --no-color app-role | tail -5 >&2
  echo "rotate-db-password: the app-role job exited $code; nothing else was changed (the old password still works)" >&2
  exit 1
fi
say "the role has the new password"
instances=$(compose config --services | grep -E '^app[0-9]+$' || true)
# shellcheck disable=SC2086
compose up -d --no-deps pgbouncer $instances >/dev/null
say "PgBouncer and$(printf ' %s' $instances) recreated"
stats_url=${STATS_URL:-http://127.0.0.1:$(sed -n 's/^HAPROXY_STATS_PORT=//p' "$env_file" | tail -1 | grep . || echo 8404)/metrics}
for service in $instances; do
  waited=0
  until curl -fsS --max-time 3 "$stats_url" | grep -q "^haproxy_server_status{proxy=\"app\",server=\"$service\",state=\"UP\"} 1"; do
    waited=$((waited + 1))
    if [ $waited -ge "${UP_TIMEOUT:-180}" ]; then echo "rotate-db-password: $service not UP after ${UP_TIMEOUT:-180}s" >&2; exit 1; fi
    sleep 1
  done
done
say "every instance UP"
# The migrate job's DATABASE_URL changed too: rollout.sh runs it, and anything else it finds.
# shellcheck disable=SC2086
exec "$here/rollout.sh" $compose_args
