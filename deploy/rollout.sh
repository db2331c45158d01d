#!/bin/sh
# Applies a change to the compose stack one instance at a time, without a failed request: a new
# image (--tag), any setting edited in .env, or a new number of instances (APP_INSTANCES).
# docs/deployment.md, "Applying a change".
#
#   deploy/rollout.sh [--tag TAG] [compose options: -p NAME, -f FILE, --env-file FILE]
#
# 1. --tag TAG is written to .env (IMAGE_TAG=TAG), so that every later command, in any shell,
#    finds the version in use.
# 2. Which services the change touches: those whose configuration (docker-compose config --hash)
#    differs from their running containers', and the instances if there are not APP_INSTANCES.
# 3. The migrate job of the new configuration runs to completion (its exit code is checked).
# 4. The instances (service `app`): each old one is replaced in turn by a new one, started first
#    and UP at HAProxy before the old one stops (it drains: HAProxy takes it out, then it closes);
#    then new ones are added, or the newest removed, until there are APP_INSTANCES.
# 5. A changed redis is recreated after the instances (they count rate limits in memory for the
#    moment it restarts; no request fails). postgres, pgbouncer and haproxy are never restarted by
#    this script: a change to them is listed and the script exits 3 (their procedures:
#    docs/operations.md, "Rotating secrets").
# Needs docker compose (or docker-compose 1.29), docker or podman, and curl; run it from the
# directory of docker-compose.yml. See deploy/lib.sh for COMPOSE, ENGINE, STATS_URL, UP_TIMEOUT.
set -eu
name=rollout
. "$(dirname "$0")/lib.sh"
tag=
while [ $# -gt 0 ]; do
  case $1 in
    --tag) tag=${2:?--tag needs a value}; shift 2 ;;
    *)
      compose_option "$@"
      [ "$taken" -gt 0 ] || fail 2 "unknown argument $1 (see --help)"
      shift "$taken"
      ;;
  esac
done

# 1. The version, recorded where the next command finds it.
if [ -n "$tag" ]; then
  case $tag in *[!A-Za-z0-9_.-]*) fail 2 "--tag must be letters, digits and ._- (a Docker tag), got $tag" ;; esac
  set_env IMAGE_TAG "$tag"
  say "IMAGE_TAG=$tag recorded in $env_file"
fi
wanted_count=${APP_INSTANCES:-$(env_value APP_INSTANCES | grep . || echo 2)}
case $wanted_count in '' | *[!0-9]* | 0) fail 2 "APP_INSTANCES must be a number of at least 1, got $wanted_count" ;; esac

# 2. What changed: the configuration's hash against the running containers' labels (three calls:
# compose is slow to start).
wanted_hashes=$(compose config --hash='*')
ids=$(compose ps -q 2>/dev/null || true)
running=
if [ -n "$ids" ]; then
  # shellcheck disable=SC2086
  running=$($ENGINE inspect --format '{{index .Config.Labels "com.docker.compose.service"}} {{index .Config.Labels "com.docker.compose.config-hash"}} {{.Id}} {{index .Config.Labels "com.docker.compose.container-number"}}' $ids)
fi
wanted_hash() { echo "$wanted_hashes" | awk -v s="$1" '$1 == s { print $2; exit }'; }
# A service without a container is not in use (another profile's): left alone.
changed=
for service in $(echo "$wanted_hashes" | awk '{ print $1 }'); do
  hashes=$(echo "$running" | awk -v s="$service" '$1 == s { print $2 }' | sort -u)
  [ -n "$hashes" ] || continue
  if [ "$hashes" != "$(wanted_hash "$service")" ]; then changed="$changed $service"; fi
done
app_hash=$(wanted_hash app)
# The instances: the old ones (another configuration), by number; how many there are.
old_ids=$(echo "$running" | awk -v h="$app_hash" '$1 == "app" && $2 != h { print $4, $3 }' | sort -n | awk '{ print $2 }')
count=$(echo "$running" | awk '$1 == "app"' | grep -c . || true)
if [ "$count" != "$wanted_count" ] && [ -z "$old_ids" ]; then changed="$changed app"; fi
say "changed:${changed:- nothing}"
in_changed() { case " $changed " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# 3. Migrations first, as a one-shot job of the new configuration.
if in_changed migrate; then
  say "migrate"
  code=0
  run_job migrate || code=$?
  compose logs --no-color migrate | tail -5
  [ "$code" = 0 ] || fail 1 "the migrate job exited $code; no instance was replaced"
fi

# 4. The instances, one at a time. A new one: compose adds it (--no-recreate leaves the others).
scale() {
  quiet compose up -d --no-deps --no-recreate --scale "app=$1" app || fail 1 "compose could not scale the instances to $1"
}
add_instance() {
  before=$(instance_ids)
  scale $((count + 1))
  added=$(instance_ids | awk -v before="$(echo $before)" 'BEGIN { n = split(before, b, " "); for (i = 1; i <= n; i++) seen[b[i]] = 1 } !seen[$1]')
  [ -n "$added" ] || fail 1 "compose did not start a new instance (see: $COMPOSE logs app)"
  count=$((count + 1))
  until_up "$added"
  say "instance $(echo "$added" | cut -c1-12) added: UP"
}
# An old one drains (SIGTERM: HAProxy takes it out, in-flight requests end) and is removed.
remove_instance() {
  quiet $ENGINE stop -t 30 "$1"
  quiet $ENGINE rm "$1"
  count=$((count - 1))
  say "instance $(echo "$1" | cut -c1-12) removed"
}
if in_changed app; then
  for old in $old_ids; do
    if [ "$count" -le "$wanted_count" ]; then add_instance; fi
    remove_instance "$old"
  done
  while [ "$count" -lt "$wanted_count" ]; do add_instance; done
  if [ "$count" -gt "$wanted_count" ]; then
    # compose stops and removes the highest-numbered ones; they drain as above.
    scale "$wanted_count"
    say "instances removed down to $wanted_count"
  fi
fi

# 5. Redis after the instances; the others are never restarted here.
if in_changed redis; then
  say "redis: recreating (rate limits count in memory until it is back)"
  quiet compose up -d --no-deps redis
fi
left=
for service in postgres pgbouncer haproxy; do
  if in_changed "$service"; then left="$left $service"; fi
done
if [ -n "$left" ]; then
  echo "rollout: not applied:$left (a restart interrupts traffic; see docs/operations.md, \"Rotating secrets\", for each)" >&2
  exit 3
fi
say "done"
