import { setFlagsFromString } from 'node:v8';

/**
 * The server process's V8 settings that Node refuses in NODE_OPTIONS, set here so that they
 * hold however the process is started (npm start, the image, docker-compose). main.ts imports
 * this module first, before any other module has run.
 *
 * `--no-allocation-site-pretenuring`: V8 watches each object and array literal, and when almost
 * every object a literal made is still alive at a scavenge, it allocates that literal's objects
 * in the old generation from then on, for the life of the process. A per-request literal can
 * look like that once: the first requests on a path wait together on cold code and fresh
 * database connections, so all of them are alive at the next scavenge. From then on each
 * request's objects of that literal are born old and keep the young objects they point to alive
 * through every scavenge until a full collection finds them dead, so each scavenge promotes
 * megabytes and full collections follow each other for as long as the process lives. A
 * request/response server has few literals whose objects live long; allocating all of them young
 * costs it nothing measurable. The traces and figures are in docs/performance.md ("Pretenuring").
 */
export const V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

for (const flag of V8_FLAGS) setFlagsFromString(flag);
