#!/bin/sh
# Run by the compose stack's one-shot `app-role` job before PgBouncer starts, and again by
# deploy/rotate-db-password.sh. As the database's owner over the network:
#   - makes sure the twin login role APP_DB_USER_b exists, a member of APP_DB_USER (made by
#     10-app-role.sh on a new volume), so it has the API role's privileges and nothing else
#     (INHERIT: no grant of its own, the audit log append-only for it as for the API's role);
#   - sets the password of the login role in use, APP_DB_USER + APP_DB_LOGIN_SUFFIX (empty or _b),
#     to APP_DB_PASSWORD, and writes that pair into PgBouncer's user list (the pgbouncerauth
#     volume), keeping the other login role's line: while the instances move from one login role
#     to the other, PgBouncer accepts both.
# With the arguments `retire ROLE`: ROLE (the login role no longer in use) loses its password and
# its line in the user list. PgBouncer re-reads the list on SIGHUP (deploy/rotate-db-password.sh).
# So the password lives in .env alone: changing it changes this job and the services that log in
# with it, never the postgres or pgbouncer services. docs/operations.md, "Rotating secrets".
set -eu
: "${APP_DB_USER:?set APP_DB_USER}"
case ${APP_DB_LOGIN_SUFFIX:-} in
  '' | _b) ;;
  *) echo "app-role: APP_DB_LOGIN_SUFFIX must be empty or _b, got ${APP_DB_LOGIN_SUFFIX}" >&2; exit 2 ;;
esac
twin=${APP_DB_USER}_b
login=$APP_DB_USER${APP_DB_LOGIN_SUFFIX:-}
userlist=/etc/pgbouncer/auth/userlist.txt
export PGPASSWORD="$POSTGRES_PASSWORD"
sql() {
  psql -v ON_ERROR_STOP=1 --no-psqlrc -q -h "${POSTGRES_HOST:-postgres}" --username "$POSTGRES_USER" \
    --dbname "$POSTGRES_DB" "$@"
}

# The user list without ROLE's line, plus `ROLE PASSWORD` when a password is given.
write_userlist() {
  next=$(mktemp "$userlist.XXXXXX") || { echo "app-role: cannot write to $(dirname "$userlist")" >&2; exit 1; }
  chmod 600 "$next"
  if [ -f "$userlist" ]; then grep -v "^\"$1\" " "$userlist" > "$next" || true; fi
  if [ -n "${2:-}" ]; then printf '"%s" "%s"\n' "$1" "$2" >> "$next"; fi
  mv "$next" "$userlist"
}

if [ "${1:-}" = retire ]; then
  role=${2:?usage: app-role-password.sh retire ROLE}
  case $role in "$APP_DB_USER" | "$twin") ;; *) echo "app-role: $role is not one of $APP_DB_USER, $twin" >&2; exit 2 ;; esac
  [ "$role" != "$login" ] || { echo "app-role: $role is the login role in use (.env); not retired" >&2; exit 2; }
  sql -v role="$role" <<'SQL'
ALTER ROLE :"role" PASSWORD NULL;
SQL
  write_userlist "$role"
  echo "app-role: $role has no password any more"
  exit 0
fi

: "${APP_DB_PASSWORD:?set APP_DB_PASSWORD}"
sql -v group="$APP_DB_USER" -v twin="$twin" -v login="$login" -v password="$APP_DB_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN INHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION', :'twin')
  WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'twin') \gexec
SELECT format('GRANT %I TO %I', :'group', :'twin')
  WHERE NOT pg_has_role(:'twin', :'group', 'MEMBER') \gexec
ALTER ROLE :"login" PASSWORD :'password';
SQL
write_userlist "$login" "$APP_DB_PASSWORD"
echo "app-role: the password of $login is set"
