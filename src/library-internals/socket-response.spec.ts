import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { responseStartedOn } from './socket-response.js';

/**
 * Canary for socket-response.ts: `socket._httpMessage` of node:http's server, on a real server
 * and a raw socket. A failure here means a Node upgrade changed it: the service would write
 * its error answer for a malformed request into the middle of a response (http/client-errors.ts).
 */
function internal(ok: boolean, what: string): void {
  if (!ok)
    throw new Error(
      `Node internal changed: ${what}. Re-check src/library-internals/socket-response.ts and http/client-errors.ts.`,
    );
}

describe('node internal: socket._httpMessage', () => {
  let server: Server;
  let client: Socket;
  beforeEach(async () => {
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterEach(async () => {
    client?.destroy();
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  const open = async (): Promise<Socket> => {
    client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    client.on('error', () => {});
    await once(client, 'connect');
    return client;
  };

  it('is the response being written on the connection, headersSent once its head is out', async () => {
    const seen = once(server, 'request') as Promise<[IncomingMessage, ServerResponse]>;
    (await open()).write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const [req, res] = await seen;
    const attached = (req.socket as Duplex & { _httpMessage?: unknown })._httpMessage;
    internal(attached === res, 'during a request, its socket._httpMessage is not its ServerResponse');
    internal(!responseStartedOn(req.socket), 'a response with nothing written counts as started');
    res.writeHead(200, { 'Content-Length': '2' });
    res.flushHeaders();
    internal(responseStartedOn(req.socket), 'a response whose head is written does not count as started');
    res.end('ok');
  });

  it('tells clientError whether a response is in progress on the socket', async () => {
    const socket = await open();
    // No request yet: nothing in progress.
    const first = once(server, 'clientError') as Promise<[Error, Duplex]>;
    socket.write('NOT HTTP\r\n\r\n');
    const [, fresh] = await first;
    internal(!responseStartedOn(fresh), 'clientError on a fresh connection sees a response in progress');
    fresh.destroy();

    // A pipelined malformed request behind one whose response has begun.
    const next = await open();
    const seen = once(server, 'request') as Promise<[IncomingMessage, ServerResponse]>;
    next.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const [, res] = await seen;
    res.writeHead(200, { 'Content-Length': '2' });
    res.flushHeaders();
    const second = once(server, 'clientError') as Promise<[Error, Duplex]>;
    next.write('NOT HTTP\r\n\r\n');
    const [, busy] = await second;
    internal(
      responseStartedOn(busy),
      'clientError behind a response in progress does not see it (socket._httpMessage)',
    );
    res.end('ok');
  });
});
