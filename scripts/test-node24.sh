#!/usr/bin/env sh
# Runs the test suite on Node 24 LTS, the production image's runtime, whatever Node this machine
# has: Node 24 comes from the npm registry's `node` package (cached by npx after the first run).
# Same flags as `npm test`; arguments go to Jest (e.g. `scripts/test-node24.sh test/pets/pets.e2e-spec.ts`).
# Processes the tests spawn (the built service, tsc) use process.execPath, so they run on 24 too.
set -eu
cd "$(dirname "$0")/.."
NODE24="node@${NODE24_VERSION:-24}"
npx -y -p "$NODE24" node -e 'console.error(`test suite on Node ${process.version}`)'
exec npx -y -p "$NODE24" node --experimental-vm-modules --no-warnings=ExperimentalWarning \
  node_modules/jest/bin/jest.js "$@"
