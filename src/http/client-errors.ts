import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ERROR_STATUS, type ErrorBody, type ErrorCode } from '../errors/api-error.js';
import { responseStartedOn } from '../library-internals/index.js';
import { stringifyJson } from '../json/json-codec.js';
import type { AppLogger } from '../logging/app-logger.js';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id.js';

/**
 * Requests Node's HTTP server refuses before any route sees them: headers over the size limit
 * (16 KiB), malformed HTTP, a client too slow to send its headers (HEADERS_TIMEOUT_MS) or its
 * request (REQUEST_TIMEOUT_MS), an Expect header Node does not know. Node would answer with a
 * bare status line; these get the Error body like every other error (docs/api.md, "Errors"), and
 * the connection is closed. Each gets a request id (X-Request-Id, and `requestId` in the body):
 * the caller's for an Expect refusal, whose headers were read; a new one for the others.
 *
 * A CONNECT request (a proxy's tunnel, which this server is not) is answered 501
 * `not_implemented` the same way; Node would close the connection without a word.
 *
 * The codes: headers too large are `headers_too_large` (431), chunk extensions too large
 * `payload_too_large` (413), malformed HTTP `validation_failed` (as the exception filter maps any
 * other 400), an unknown Expect `expectation_failed` (417), and a request cut for being too slow
 * `request_timeout`: nothing was wrong with what arrived, it did not arrive in time. Each status
 * is its code's, from ERROR_STATUS.
 *
 * Each refusal is logged (AppLogger.refused) at info with the client's address: the client chose
 * what it sent, so it is not an error of the service.
 */
interface Answer {
  status: number;
  code: ErrorCode;
  message: string;
}

function answer(code: ErrorCode, message: string): Answer {
  return { status: ERROR_STATUS[code], code, message };
}

const ANSWERS: Record<string, Answer> = {
  HPE_HEADER_OVERFLOW: answer('headers_too_large', 'The request headers are too large (at most 16 KiB).'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: answer('payload_too_large', 'The chunk extensions of the request body are too large.'),
  ERR_HTTP_REQUEST_TIMEOUT: answer('request_timeout', 'The request was not received completely in time.'),
};
const BAD_REQUEST = answer('validation_failed', 'The request is not valid HTTP/1.1.');
const CONNECT = answer('not_implemented', 'CONNECT is not supported: this server is not a proxy.');
const EXPECTATION = answer('expectation_failed', 'Expect: only 100-continue is supported.');

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
  501: 'Not Implemented',
};

export function answerClientErrors(server: Server, logger?: AppLogger): void {
  // An Expect header other than 100-continue: Node would answer a bare 417 itself.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const requestId = requestIdFor(req);
    logger?.refused({
      requestId,
      method: req.method,
      url: req.url,
      status: EXPECTATION.status,
      code: EXPECTATION.code,
      ip: req.socket.remoteAddress,
    });
    const body: ErrorBody = { ...EXPECTATION, requestId };
    res.writeHead(EXPECTATION.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'close',
      [REQUEST_ID_HEADER]: requestId,
    });
    res.end(stringifyJson(body));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node does: answer only when nothing of a response has been written on this socket yet
    // (never corrupt one in progress), and never to a peer that has gone away.
    if (socket.writable && !responseStartedOn(socket) && err.code !== 'ECONNRESET') {
      const answer = ANSWERS[err.code ?? ''] ?? BAD_REQUEST;
      const requestId = answerOnSocket(socket, answer);
      logger?.refused({ requestId, status: answer.status, code: answer.code, reason: err.code, ip: peer(socket) });
      return;
    }
    socket.destroy();
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = answerOnSocket(socket, CONNECT);
    logger?.refused({
      requestId,
      method: req.method,
      url: req.url,
      status: CONNECT.status,
      code: CONNECT.code,
      ip: peer(socket),
    });
  });
}

/** The address of the client at the other end of the connection. */
function peer(socket: Duplex): string | undefined {
  return (socket as Partial<Socket>).remoteAddress;
}

/** Writes an Error answer straight on the socket, then closes it; returns the request id it gave. */
function answerOnSocket(socket: Duplex, answer: Answer): string {
  const requestId = randomUUID();
  const body: ErrorBody = { code: answer.code, message: answer.message, status: answer.status, requestId };
  const text = stringifyJson(body);
  socket.end(
    `HTTP/1.1 ${answer.status} ${REASONS[answer.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      'Cache-Control: no-store\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      text,
  );
  // end() flushes the answer; destroy whatever is left once it has been written.
  socket.once('finish', () => socket.destroy());
  setTimeout(() => socket.destroy(), 1000).unref();
  return requestId;
}
