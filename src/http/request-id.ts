import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { containsSecret } from '../logging/redact-secrets.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';

declare module 'node:http' {
  interface IncomingMessage {
    /** The request's id, set by the request edge (http-edge.ts) before routing. */
    id?: string;
  }
}

/**
 * What a caller's or balancer's X-Request-Id may look like to be reused: short, and nothing
 * that could break a log line or a header (no spaces, quotes or control characters).
 */
const WELL_FORMED = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The request's id: the incoming X-Request-Id when well formed, else a new UUID. An id shaped
 * like one of our secrets (an API key sent in the wrong header) is never reused: the id is
 * written in every log line of the request, its trace and its response.
 */
export function requestIdFor(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && WELL_FORMED.test(incoming) && !containsSecret(incoming)
    ? incoming
    : randomUUID();
}
