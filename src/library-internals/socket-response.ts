import type { Duplex } from 'node:stream';

/**
 * Internal: `socket._httpMessage`, the ServerResponse that node:http's server has attached to
 * a connection while a response is being written (checked against Node 20.20.2; Node's own
 * clientError default reads it for the same purpose). Canary: socket-response.spec.ts.
 *
 * Whether a response has begun on this socket: its status line and headers are written, so
 * nothing else may be written on the connection without corrupting it.
 */
export function responseStartedOn(socket: Duplex): boolean {
  return (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true;
}
