// Node's flags for the service process, as `npm start` and the image's CMD pass them: one list
// for every part of the bench that starts the service (settings.mjs re-exports it, infra.mjs
// imports it without the bench's settings). test/process/heap-tuning.e2e-spec.ts keeps it equal
// to the deployed command line.
export const SERVICE_NODE_FLAGS = ['--no-allocation-site-pretenuring', '--heap-growing-percent=100'];
