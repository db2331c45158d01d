import fc from 'fast-check';
import { once } from 'node:events';
import { createServer, OutgoingMessage, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { directHeaders, dropHeader, prepareHeader, putHeader, putHeaders } from './outgoing-headers.js';

/**
 * Canary for outgoing-headers.ts: node:http's store of a response's headers (`kOutHeaders`), on
 * a real server and a raw socket. A failure here means a Node upgrade changed it: the service's
 * security, rate-limit and content headers would be missing or wrong on every response.
 */
function internal(ok: boolean, what: string): void {
  if (!ok)
    throw new Error(
      `Node internal changed: ${what}. Re-check src/library-internals/outgoing-headers.ts and its callers.`,
    );
}

describe('node internal: kOutHeaders', () => {
  let server: Server;
  beforeEach(async () => {
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterEach(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  /** Sends one request; `handle` answers it; resolves with the raw response text. */
  async function exchange(handle: (res: ServerResponse) => void): Promise<string> {
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => handle(res));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    await once(socket, 'end');
    return text;
  }

  it('is found on every response', () => {
    internal(directHeaders, 'an OutgoingMessage has no own symbol property named kOutHeaders');
  });

  it('holds a put header as setHeader would: read back by any case, written with the case given', async () => {
    let seen: Record<string, unknown> = {};
    const text = await exchange((res) => {
      putHeader(res, 'x-request-id', 'X-Request-Id', 'abc');
      putHeaders(res, [prepareHeader('Cache-Control', 'no-store'), prepareHeader('X-Many', ['a', 'b'])]);
      putHeader(res, 'content-length', 'Content-Length', 2);
      res.setHeader('X-Set', 'set');
      seen = {
        get: res.getHeader('X-REQUEST-ID'),
        has: res.hasHeader('cache-control'),
        names: res.getHeaderNames(),
        length: res.getHeader('content-length'),
      };
      res.end('ok');
    });
    internal(seen.get === 'abc' && seen.has === true, 'getHeader or hasHeader does not read a put header');
    expect(seen.names).toEqual(['x-request-id', 'cache-control', 'x-many', 'content-length', 'x-set']);
    expect(seen.length).toBe(2);
    const head = text.split('\r\n\r\n')[0];
    expect(head).toContain('\r\nX-Request-Id: abc\r\nCache-Control: no-store\r\nX-Many: a\r\nX-Many: b\r\n');
    expect(head).toContain('\r\nContent-Length: 2\r\n');
    // node:http frames the body by the Content-Length put, not chunked.
    internal(!/transfer-encoding/i.test(head), 'a Content-Length put directly is not seen when the head is written');
    expect(text.endsWith('\r\n\r\nok')).toBe(true);
  });

  it('drops a header as removeHeader would, and a header set after the head is refused as by setHeader', async () => {
    let late: unknown;
    const text = await exchange((res) => {
      res.setHeader('X-Powered-By', 'Express');
      dropHeader(res, 'x-powered-by', 'X-Powered-By');
      dropHeader(res, 'x-absent', 'X-Absent');
      res.end('{}');
      try {
        putHeader(res, 'x-late', 'X-Late', '1');
      } catch (err) {
        late = err;
      }
    });
    expect(text).not.toMatch(/x-powered-by/i);
    expect((late as { code?: string }).code).toBe('ERR_HTTP_HEADERS_SENT');
  });

  it('puts a header on a fresh response whose store is still null', () => {
    const res = new OutgoingMessage() as unknown as ServerResponse;
    internal(res.getHeaderNames().length === 0, 'a fresh OutgoingMessage has headers');
    putHeader(res, 'x-a', 'X-A', '1');
    expect(res.getHeaders()).toEqual({ 'x-a': '1' });
  });
});

describe('prepareHeader', () => {
  // Mostly header-like text, with control, non-ASCII and separator characters mixed in.
  const text = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.constantFrom('X-Rate', 'Content-Type', 'a b', 'a:b', 'é', 'v\r\nX: y', '\t', ''),
  );

  it('refuses exactly the names and values setHeader refuses, with the same error', () => {
    fc.assert(
      fc.property(text, fc.oneof(text, fc.integer()), (name, value) => {
        const probe = new OutgoingMessage();
        let expected: unknown;
        try {
          probe.setHeader(name, value);
        } catch (err) {
          expected = (err as { code?: string }).code;
        }
        let actual: unknown;
        try {
          const [lower, given, kept] = prepareHeader(name, value);
          expect([lower, given, kept]).toEqual([name.toLowerCase(), name, value]);
        } catch (err) {
          actual = (err as { code?: string }).code;
        }
        expect(actual).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
