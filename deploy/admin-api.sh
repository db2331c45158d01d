#!/bin/sh
# The admin API of the compose stack, from the host: the request is made inside an instance's
# container (the admin listener is on its loopback, ADMIN_PORT, never published; the image has
# Node but no curl). docs/admin-api.md, "In the compose stack".
#
#   ADMIN_TOKEN=asadm_… deploy/admin-api.sh METHOD PATH [JSON] [compose options: -p, -f, --env-file]
#   e.g. deploy/admin-api.sh GET /keys?limit=50
#        deploy/admin-api.sh POST /keys '{"name":"Acme","plan":"pro"}'
#
# PATH is under /admin/v1. Prints the answer's body; exits 0 on a 2xx, 1 otherwise (the body is
# the Error). INSTANCE picks the instance by its number (compose exec --index; default: the
# lowest-numbered running one). See deploy/lib.sh for COMPOSE and ENGINE.
set -eu
name=admin-api
. "$(dirname "$0")/lib.sh"
words=
while [ $# -gt 0 ]; do
  compose_option "$@"
  if [ "$taken" -gt 0 ]; then shift "$taken"; continue; fi
  words="$words x"
  eval "arg$(echo "$words" | wc -w)=\$1"
  shift
done
method=${arg1:?usage: deploy/admin-api.sh METHOD PATH [JSON]}
route=${arg2:?usage: deploy/admin-api.sh METHOD PATH [JSON]}
body=${arg3:-}
: "${ADMIN_TOKEN:?set ADMIN_TOKEN to an admin token (apikey admin create)}"
index=${INSTANCE:-$(instance_index)}
[ -n "$index" ] || fail 1 "no instance is running"
# The token, method, path and body reach the exec'd process as its environment, not its arguments.
# shellcheck disable=SC2016
compose exec -T -e "ADMIN_TOKEN=$ADMIN_TOKEN" -e "ADMIN_METHOD=$method" -e "ADMIN_PATH=$route" \
  -e "ADMIN_BODY=$body" --index "$index" app node -e '
const { ADMIN_PORT, ADMIN_TOKEN, ADMIN_METHOD, ADMIN_PATH, ADMIN_BODY } = process.env;
if (!ADMIN_PORT) { console.error("admin-api: ADMIN_PORT is not set in the stack (.env): the admin API is off"); process.exit(1); }
const headers = { Authorization: `Bearer ${ADMIN_TOKEN}` };
if (ADMIN_BODY) headers["Content-Type"] = "application/json";
fetch(`http://127.0.0.1:${ADMIN_PORT}/admin/v1${ADMIN_PATH}`, { method: ADMIN_METHOD, headers, body: ADMIN_BODY || undefined })
  .then(async (r) => { process.stdout.write((await r.text()) + "\n"); process.exit(r.ok ? 0 : 1); },
        (e) => { console.error(`admin-api: ${e.message}`); process.exit(1); });
'
