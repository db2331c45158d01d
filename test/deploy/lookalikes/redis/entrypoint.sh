#!/bin/sh
# Test fixture: as the official image does, runs redis-server as the redis user, owning /data.
set -eu
if [ "${1:-}" = redis-server ] && [ "$(id -u)" = 0 ]; then
  chown -R redis:redis /data
  exec setpriv --reuid=redis --regid=redis --init-groups "$@"
fi
exec "$@"
