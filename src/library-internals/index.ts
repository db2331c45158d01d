/**
 * Every use of a framework or library internal, fenced here: things the service relies on that
 * no public API offers, each checked against the installed version named in its file and
 * guarded by a canary spec beside it (`*.spec.ts`) that runs the real package and fails,
 * naming the internal and what to re-check, when an upgrade changes it. After upgrading any
 * of these packages, run `npm test -- src/library-internals` first.
 *
 * - route-table.ts: Express's routing table (`app.router.stack`), and Nest mounting middleware
 *   as a wildcard route (express 5.3.0 / router 2.3.0, @nestjs/core 12.5.1).
 * - router-not-found.ts: the `Cannot GET /x` message of Nest's not-found exception
 *   (@nestjs/core 12.5.1).
 * - socket-response.ts: `socket._httpMessage`, the response node:http writes on a connection
 *   (Node 20.20.2).
 * - after-routes.ts: NestApplication.init's order (routes, onModuleInit, not-found handler)
 *   (@nestjs/core 12.5.1, express 5.3.0).
 * - helmet-recorder.ts: helmet's middleware being synchronous and setting headers only through
 *   setHeader/removeHeader (helmet 8.3.0).
 * - outgoing-headers.ts: the store of a response's headers under node:http's `kOutHeaders`
 *   symbol, written directly for the headers of every response (Node 20.20.2, 24.21.0).
 * - validation-metadata.ts: class-validator's metadata storage, to list a DTO's fields
 *   (class-validator 0.15.1).
 * - pg-client-query.ts: every query of a pg pool's clients passing through `Client#query`, which
 *   a subclass replaces (pg 8.23.1, pg-pool 3.14.0, @prisma/adapter-pg 7.10.1). database/pool.ts
 *   imports the file itself, so opening PostgreSQL loads none of the HTTP framework's internals.
 *
 * This folder is kernel: it imports packages only, never a feature.
 */
export { useBehindRoutes } from './after-routes.js';
export { recordHeaders, type RecordedHeaders } from './helmet-recorder.js';
export { allowedMethods, isMiddlewareRoute } from './route-table.js';
export { interceptedClient, type QueryCallback } from './pg-client-query.js';
export { isRouterNotFound } from './router-not-found.js';
export { responseStartedOn } from './socket-response.js';
export { dropHeader, prepareHeader, putHeader, putHeaders, type PreparedHeader } from './outgoing-headers.js';
export { validatedProperties } from './validation-metadata.js';
