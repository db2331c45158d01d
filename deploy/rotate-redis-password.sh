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
name=rotate-redis-password
. "$(dirname "$0")/lib.sh"
one_argument "$@"
new=$(new_password "$arg")
# 1. Both passwords accepted (the container's REDISCLI_AUTH is the current one).
compose exec -T redis redis-cli ACL SETUSER default ">$new" | grep -qx OK
say "Redis accepts the new password too"
# 2. Recorded in the env file.
set_env REDIS_PASSWORD "$new"
# 3. The instances, then Redis itself.
# shellcheck disable=SC2086 # compose options are words
exec "$here/rollout.sh" $compose_args
