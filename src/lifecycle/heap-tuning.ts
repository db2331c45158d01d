import { setFlagsFromString } from 'node:v8';

/**
 * The server process's V8 settings that Node refuses in NODE_OPTIONS, set here so that they
 * hold however the process is started (npm start, the image, docker-compose). main.ts imports
 * this module first, before any other module has run.
 *
 * `--no-allocation-site-pretenuring`: left on, a fresh process can fall into running several
 * full collections a second for its whole life, its creates costing about a third more CPU
 * (bench scenario createPet, its full-collection count; test/heap-tuning.e2e-spec.ts checks
 * the flag takes effect). Off, a request/response server loses nothing measurable.
 */
export const V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

for (const flag of V8_FLAGS) setFlagsFromString(flag);
