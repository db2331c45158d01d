#!/usr/bin/env sh
# Generates the Prisma client into src/generated/prisma.
#
# The Prisma CLI insists on a `schema-engine` binary that it downloads on first use; machines
# without access to Prisma's binary host cannot fetch it. `prisma generate` never runs that
# engine, it only checks that the file exists, so when PRISMA_SCHEMA_ENGINE_BINARY is unset this
# script points it at a stub that exits 1. To use the real engine, set the variable to it.
set -eu
cd "$(dirname "$0")/.."
if [ -z "${PRISMA_SCHEMA_ENGINE_BINARY:-}" ]; then
  stub="$(pwd)/node_modules/.cache/prisma-offline/schema-engine"
  mkdir -p "$(dirname "$stub")"
  printf '#!/bin/sh\necho "schema-engine is not available offline" >&2\nexit 1\n' > "$stub"
  chmod +x "$stub"
  export PRISMA_SCHEMA_ENGINE_BINARY="$stub"
fi
exec npx --no-install prisma generate
