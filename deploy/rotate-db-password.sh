#!/bin/sh
# Rotates the API's database password of the compose stack without a failed request and without
# restarting PostgreSQL or PgBouncer. docs/operations.md, "Rotating secrets".
#
#   deploy/rotate-db-password.sh [NEW] [compose options: -p NAME, -f FILE, --env-file FILE]
#
# The instances log in as one of two login roles, APP_DB_USER or its twin APP_DB_USER_b (a member
# of it, with its privileges); APP_DB_LOGIN_SUFFIX in .env says which. The other one is idle.
# 1. NEW (default: 48 random hex digits; letters and digits only, it goes into a URL) and the idle
#    role become APP_DB_PASSWORD and APP_DB_LOGIN_SUFFIX in .env.
# 2. The one-shot `app-role` job gives the idle role NEW and adds it to PgBouncer's user list;
#    PgBouncer re-reads the list (SIGHUP) and accepts both roles; the script logs in through it.
# 3. deploy/rollout.sh runs the migrate job (the role's statement timeout) and replaces the
#    instances one at a time; the old ones keep logging in as the old role meanwhile.
# 4. The old role loses its password and its line in PgBouncer's list (`app-role retire`).
# If step 2 fails, .env is put back and nothing else has changed.
set -eu
name=rotate-db-password
. "$(dirname "$0")/lib.sh"
one_argument "$@"
new=$(new_password "$arg")

user=$(env_value APP_DB_USER | grep . || echo animal_app)
old_suffix=$(env_value APP_DB_LOGIN_SUFFIX)
case $old_suffix in '') new_suffix=_b ;; _b) new_suffix= ;; *) fail 2 "APP_DB_LOGIN_SUFFIX in $env_file must be empty or _b" ;; esac
old_password=$(env_value APP_DB_PASSWORD)
database=$(env_value POSTGRES_DB | grep . || echo animal_store)
reload_pgbouncer() { compose exec -T pgbouncer sh -c 'kill -HUP 1'; }

# 1. Recorded in the env file.
set_env APP_DB_LOGIN_SUFFIX "$new_suffix"
set_env APP_DB_PASSWORD "$new"
say "$user$new_suffix with a new APP_DB_PASSWORD written to $env_file"

# 2. The idle role's new password, in PostgreSQL and PgBouncer.
if ! run_job app-role; then
  compose logs --no-color app-role | tail -5 >&2
  set_env APP_DB_LOGIN_SUFFIX "$old_suffix"
  set_env APP_DB_PASSWORD "$old_password"
  fail 1 "the app-role job failed; $env_file is as it was and the instances are untouched"
fi
reload_pgbouncer
tries=0
until compose exec -T -e "PGPASSWORD=$new" pgbouncer \
  psql -XAtq -h 127.0.0.1 -p 6432 -U "$user$new_suffix" -d "$database" -c 'SELECT 1' >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ $tries -lt 10 ] || fail 1 "PgBouncer does not accept $user$new_suffix with the new password (see: $COMPOSE logs pgbouncer)"
  sleep 1
done
say "the role has the new password; PgBouncer accepts $user$new_suffix and $user$old_suffix"

# 3. The instances, one at a time (and the migrate job first).
# shellcheck disable=SC2086 # compose options are words
"$here/rollout.sh" $compose_args

# 4. The old role retired.
quiet compose run --rm --no-deps -T app-role retire "$user$old_suffix"
reload_pgbouncer
say "$user$old_suffix retired: no password, not in PgBouncer's list"
