#!/bin/sh
# Applies a change to the compose stack one instance at a time, without a failed request: a new
# image (--tag) or any setting edited in .env. docs/deployment.md, "Applying a change".
#
#   deploy/rollout.sh [--tag TAG] [compose options: -p NAME, -f FILE, --env-file FILE]
#
# 1. --tag TAG is written to .env (IMAGE_TAG=TAG), so that every later command, in any shell,
#    finds the version in use.
# 2. Which services the change touches: those whose configuration (docker-compose config --hash)
#    differs from their running container's.
# 3. The migrate job of the new configuration runs to completion (its exit code is checked).
# 4. Each changed instance (app1, app2, …) is replaced in turn, and the next one only once HAProxy
#    reports the new one UP; the others carry the traffic meanwhile.
# 5. A changed redis is recreated after the instances (they count rate limits in memory for the
#    moment it restarts; no request fails). postgres, pgbouncer and haproxy are never restarted by
#    this script: a change to them is listed and the script exits 3 (their procedures:
#    docs/operations.md, "Rotating secrets").
# Needs docker compose (or docker-compose 1.29), docker or podman, and curl; run it from the
# directory of docker-compose.yml. COMPOSE overrides the compose command ("docker-compose"),
# ENGINE the engine's command (docker, else podman), STATS_URL HAProxy's metrics
# (http://127.0.0.1:HAPROXY_STATS_PORT/metrics), UP_TIMEOUT how long an instance may take (180 s).
set -eu

tag=
env_file=.env
compose_args=
while [ $# -gt 0 ]; do
  case $1 in
    --tag) tag=${2:?--tag needs a value}; shift 2 ;;
    --env-file) env_file=${2:?--env-file needs a value}; compose_args="$compose_args --env-file $2"; shift 2 ;;
    -p | -f | --project-name | --file) compose_args="$compose_args $1 ${2:?$1 needs a value}"; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "rollout: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "${COMPOSE:-}" ]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE=docker-compose; fi
fi
if [ -z "${ENGINE:-}" ]; then
  if command -v docker >/dev/null 2>&1; then ENGINE=docker; else ENGINE=podman; fi
fi
# shellcheck disable=SC2086 # the compose command and its options are words
compose() { $COMPOSE --ansi never $compose_args "$@"; }
say() { printf 'rollout: %s (%s)\n' "$*" "$(date -u +%T)"; }

# The value `name` has in the env file (the last line setting it), or empty.
env_value() { sed -n "s/^$1=//p" "$env_file" 2>/dev/null | tail -1; }

# 1. The version, recorded where the next command finds it.
if [ -n "$tag" ]; then
  case $tag in *[!A-Za-z0-9_.-]*) echo "rollout: --tag must be letters, digits and ._- (a Docker tag), got $tag" >&2; exit 2 ;; esac
  touch "$env_file"
  if grep -q '^#\{0,1\} \{0,1\}IMAGE_TAG=' "$env_file"; then
    sed -i "s/^#\{0,1\} \{0,1\}IMAGE_TAG=.*/IMAGE_TAG=$tag/" "$env_file"
  else
    printf 'IMAGE_TAG=%s\n' "$tag" >> "$env_file"
  fi
  say "IMAGE_TAG=$tag recorded in $env_file"
fi
stats_url=${STATS_URL:-http://127.0.0.1:$(env_value HAPROXY_STATS_PORT | grep . || echo 8404)/metrics}
up_timeout=${UP_TIMEOUT:-180}

# 2. What changed: the configuration's hash against the running container's label (three calls:
# compose is slow to start).
container() { compose ps -q "$1" 2>/dev/null | head -1; }
wanted_hashes=$(compose config --hash='*')
ids=$(compose ps -q 2>/dev/null || true)
running_hashes=
if [ -n "$ids" ]; then
  # shellcheck disable=SC2086
  running_hashes=$($ENGINE inspect --format '{{index .Config.Labels "com.docker.compose.service"}} {{index .Config.Labels "com.docker.compose.config-hash"}}' $ids)
fi
# A service without a container is new (an instance added: created) or not in use (another
# profile's: left alone).
changed=
for service in $(echo "$wanted_hashes" | awk '{ print $1 }'); do
  running=$(echo "$running_hashes" | awk -v s="$service" '$1 == s { print $2; exit }')
  if [ -z "$running" ]; then
    case $service in app[0-9]*) changed="$changed $service" ;; esac
    continue
  fi
  wanted=$(echo "$wanted_hashes" | awk -v s="$service" '$1 == s { print $2; exit }')
  if [ "$running" != "$wanted" ]; then changed="$changed $service"; fi
done
say "changed:${changed:- nothing}"
in_changed() { case " $changed " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# HAProxy's view of server $1: UP or not, from its metrics.
is_up() { curl -fsS --max-time 3 "$stats_url" | grep -q "^haproxy_server_status{proxy=\"app\",server=\"$1\",state=\"UP\"} 1"; }
until_up() {
  waited=0
  until is_up "$1"; do
    waited=$((waited + 1))
    if [ $waited -ge "$up_timeout" ]; then echo "rollout: $1 not UP at HAProxy after ${up_timeout}s; stopping here (see: $COMPOSE logs $1)" >&2; exit 1; fi
    sleep 1
  done
}

# 3. Migrations first, as a one-shot job of the new configuration.
if in_changed migrate; then
  say "migrate"
  compose up -d --no-deps migrate >/dev/null
  id=$(container migrate)
  while [ "$($ENGINE inspect --format '{{.State.Status}}' "$id")" != exited ]; do sleep 1; done
  code=$($ENGINE inspect --format '{{.State.ExitCode}}' "$id")
  compose logs --no-color migrate | tail -5
  if [ "$code" != 0 ]; then echo "rollout: the migrate job exited $code; no instance was replaced" >&2; exit 1; fi
fi

# 4. The instances, one at a time.
instances=$(echo "$wanted_hashes" | awk '{ print $1 }' | grep -E '^app[0-9]+$' || true)
for service in $instances; do
  in_changed "$service" || continue
  for other in $instances; do
    [ "$other" = "$service" ] && continue
    until_up "$other"
  done
  say "$service: replacing"
  compose up -d --no-deps "$service" >/dev/null
  until_up "$service"
  say "$service: UP"
done

# 5. Redis after the instances; the others are never restarted here.
if in_changed redis; then
  say "redis: recreating (rate limits count in memory until it is back)"
  compose up -d --no-deps redis >/dev/null
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
