import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * What a caller's or balancer's X-Request-Id may look like to be reused: short, and nothing
 * that could break a log line or a header (no spaces, quotes or control characters).
 */
const WELL_FORMED = /^[A-Za-z0-9._-]{1,128}$/;

/** The request's id: the incoming X-Request-Id when well formed, else a new UUID. */
export function requestIdFor(req: Request): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && WELL_FORMED.test(incoming) ? incoming : randomUUID();
}

/**
 * First middleware of the app: gives every request an id (req.id, which the access log and
 * error logs carry) and echoes it in X-Request-Id, on errors too, so a client can quote it.
 */
export function requestIdMiddleware() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const id = requestIdFor(req);
    req.id = id;
    res.setHeader(REQUEST_ID_HEADER, id);
    next();
  };
}
