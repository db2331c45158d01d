# Shared by the deploy/ scripts (sourced, not run): their compose options, the compose and engine
# commands, the env file, and HAProxy's view of the instances. A script sets `name` (its prefix in
# messages) before sourcing it, and passes each argument it does not know itself to
# compose_option.
#
# Environment: COMPOSE overrides the compose command (docker compose, else docker-compose), ENGINE
# the engine's (docker, else podman), STATS_URL HAProxy's stats (http://127.0.0.1:HAPROXY_STATS_PORT),
# UP_TIMEOUT how long an instance may take to be UP at HAProxy (180 s).

# Runs a command, showing its output only when it fails (compose's progress lines and the
# engine's notices otherwise drown the script's own).
quiet() {
  quiet_out=$("$@" 2>&1) || {
    quiet_code=$?
    printf '%s\n' "$quiet_out" >&2
    return $quiet_code
  }
}

# The directory of the scripts.
here=$(cd "$(dirname "$0")" && pwd)
env_file=.env
compose_args=

say() { printf '%s: %s (%s)\n' "$name" "$*" "$(date -u +%T)"; }
fail() {
  printf '%s: %s\n' "$name" "$2" >&2
  exit "$1"
}

# The script's header comment (from its second line to the first line that is not a comment).
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

# One of the options every script takes (-p NAME, -f FILE, --env-file FILE, -h): sets `taken` to
# the number of words used, 0 when $1 is none of them.
compose_option() {
  taken=2
  case $1 in
    --env-file) env_file=${2:?--env-file needs a value}; compose_args="$compose_args $1 $2" ;;
    -p | -f | --project-name | --file) compose_args="$compose_args $1 ${2:?$1 needs a value}" ;;
    -h | --help) usage; exit 0 ;;
    -*) fail 2 "unknown option $1 (see --help)" ;;
    *) taken=0 ;;
  esac
}

# The arguments of a script that takes the compose options and at most one word of its own: sets
# `arg` to that word (empty without one).
one_argument() {
  arg=
  while [ $# -gt 0 ]; do
    compose_option "$@"
    if [ "$taken" -gt 0 ]; then
      shift "$taken"
      continue
    fi
    [ -z "$arg" ] || fail 2 "one argument only, got $arg and $1 (see --help)"
    arg=$1
    shift
  done
}

if [ -z "${COMPOSE:-}" ]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE=docker-compose; fi
fi
if [ -z "${ENGINE:-}" ]; then
  if command -v docker >/dev/null 2>&1; then ENGINE=docker; else ENGINE=podman; fi
fi
# shellcheck disable=SC2086 # the compose command and its options are words
compose() { $COMPOSE --ansi never $compose_args "$@"; }

# The value NAME has in the env file (its last line setting it), or empty.
env_value() { sed -n "s/^$1=//p" "$env_file" 2>/dev/null | tail -1; }

# Sets NAME=VALUE in the env file: replaces the line that sets or shows (commented out) NAME, or
# appends one. VALUE must need no quoting (letters, digits, ._-).
set_env() {
  touch "$env_file"
  if grep -q "^#\{0,1\} \{0,1\}$1=" "$env_file"; then
    sed -i "s/^#\{0,1\} \{0,1\}$1=.*/$1=$2/" "$env_file"
  else
    printf '%s=%s\n' "$1" "$2" >> "$env_file"
  fi
}

# A new password: $1 when given (letters and digits only: it goes into URLs), else 48 random hex digits.
new_password() {
  case ${1:-} in
    '') od -An -tx1 -N24 /dev/urandom | tr -d ' \n' ;;
    *[!A-Za-z0-9]*) fail 2 "the password must be letters and digits" ;;
    *) printf '%s' "$1" ;;
  esac
}

# Runs the one-shot job SERVICE of the current configuration and waits for it to exit; its exit code.
run_job() {
  quiet compose up -d --no-deps "$1" || return 1
  job_id=$(compose ps -q "$1" | head -1)
  while [ "$($ENGINE inspect --format '{{.State.Status}}' "$job_id")" != exited ]; do sleep 1; done
  return "$($ENGINE inspect --format '{{.State.ExitCode}}' "$job_id")"
}

stats_url() { echo "${STATS_URL:-http://127.0.0.1:$(env_value HAPROXY_STATS_PORT | grep . || echo 8404)}"; }

# The running instances' containers (service `app`), one id a line.
instance_ids() { compose ps -q app 2>/dev/null || true; }

# A container's address on the stack's network.
address_of() { $ENGINE inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$1" | awk '{ print $1 }'; }

# The addresses of HAProxy's servers of backend `app` that are UP and passed their last check
# (one a line), from its CSV stats.
up_addresses() {
  curl -fsS --max-time 3 "$(stats_url)/stats;csv" | awk -F, '
    NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "status") s = i; if ($i == "check_status") c = i; if ($i == "addr") a = i }; next }
    $1 == "app" && $s == "UP" && $c == "L7OK" { sub(/:[0-9]+$/, "", $a); print $a }'
}

# Waits until HAProxy reports container $1 UP (at most UP_TIMEOUT seconds).
until_up() {
  up_address=$(address_of "$1")
  up_waited=0
  until up_addresses | grep -qx "$up_address"; do
    up_waited=$((up_waited + 1))
    if [ $up_waited -ge "${UP_TIMEOUT:-180}" ]; then
      fail 1 "instance $1 ($up_address) not UP at HAProxy after ${UP_TIMEOUT:-180}s; stopping here (see: $COMPOSE logs app)"
    fi
    sleep 1
  done
}

# The number of a running instance (compose exec --index N app): after a rollout the numbers no
# longer start at 1, the default of docker-compose 1.29's exec.
instance_index() {
  for id in $(instance_ids); do
    $ENGINE inspect --format '{{.State.Running}} {{index .Config.Labels "com.docker.compose.container-number"}}' "$id"
  done | awk '$1 == "true" { print $2 }' | sort -n | head -1
}
