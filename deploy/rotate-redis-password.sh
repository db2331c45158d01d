#!/bin/sh
# Rotates the stack's Redis password (REDIS_PASSWORD) without a failed request.
# docs/operations.md, "Rotating secrets".
#
#   deploy/rotate-redis-password.sh [NEW] [compose options: -p NAME, -f FILE, --env-file FILE]
#
# 1. The running Redis accepts NEW besides the current password (ACL SETUSER default >NEW), so
#    the instances' open connections and new ones with either password work.
# 2. NEW is written to .env (REDIS_PASSWORD).
# 3. deploy/rollout.sh replaces the instances one at a time (their REDIS_URL has NEW), then
#    recreates Redis with NEW as its only password (its data stays on its volume; the instances
#    count rate limits in memory for the moment it restarts).
# NEW defaults to 48 random hex digits; letters and digits only (it goes into a URL).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
new=
env_file=.env
compose_args=
while [ $# -gt 0 ]; do
  case $1 in
    --env-file) env_file=${2:?--env-file needs a value}; compose_args="$compose_args $1 $2"; shift 2 ;;
    -p | -f | --project-name | --file) compose_args="$compose_args $1 ${2:?$1 needs a value}"; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "rotate-redis-password: unknown option $1" >&2; exit 2 ;;
    *) new=$1; shift ;;
  esac
done
new=${new:-$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')}
case $new in '' | *[!A-Za-z0-9]*) echo "rotate-redis-password: the password must be letters and digits" >&2; exit 2 ;; esac
if [ -z "${COMPOSE:-}" ]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE=docker-compose; fi
fi
# 1. Both passwords accepted (the container's REDISCLI_AUTH is the current one).
# shellcheck disable=SC2086
$COMPOSE --ansi never $compose_args exec -T redis redis-cli ACL SETUSER default ">$new" | grep -qx OK
echo "rotate-redis-password: Redis accepts the new password too"
# 2. Recorded in the env file.
touch "$env_file"
if grep -q '^#\{0,1\} \{0,1\}REDIS_PASSWORD=' "$env_file"; then
  sed -i "s/^#\{0,1\} \{0,1\}REDIS_PASSWORD=.*/REDIS_PASSWORD=$new/" "$env_file"
else
  printf 'REDIS_PASSWORD=%s\n' "$new" >> "$env_file"
fi
# 3. The instances, then Redis itself.
# shellcheck disable=SC2086
exec "$here/rollout.sh" $compose_args
