import helmet, { type HelmetOptions } from 'helmet';
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_HELMET_OPTIONS, DOCS_HELMET_OPTIONS } from '../http/http-edge.js';
import { recordHeaders } from './helmet-recorder.js';

/**
 * Canary for helmet-recorder.ts: helmet runs synchronously and acts on a response through
 * setHeader and removeHeader alone, checked by running the real helmet on a real node:http
 * response. A failure here means a helmet upgrade changed that: the recorded headers the edge
 * replays (http/http-edge.ts) would not be helmet's.
 */
function internal(ok: boolean, what: string): void {
  if (!ok)
    throw new Error(
      `helmet internal changed: ${what}. Re-check src/library-internals/helmet-recorder.ts and http/http-edge.ts.`,
    );
}

/** What helmet(options) does to a real response that already carries X-Powered-By. */
async function onRealResponse(options: HelmetOptions): Promise<{ headers: OutgoingHttpHeaders; synchronous: boolean }> {
  let result: { headers: OutgoingHttpHeaders; synchronous: boolean } | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('X-Powered-By', 'something');
    let synchronous = false;
    helmet(options)(req, res, () => {
      synchronous = true;
    });
    result = { headers: res.getHeaders(), synchronous };
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const req = request({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', path: '/', agent: false });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.resume();
  await once(res, 'end');
  server.close();
  await once(server, 'close');
  return result!;
}

describe('helmet internal: synchronous, setHeader/removeHeader only', () => {
  it.each([
    ['the API policy', API_HELMET_OPTIONS],
    ['the docs policy', DOCS_HELMET_OPTIONS],
    ["helmet's defaults", {}],
  ])('records exactly what helmet does to a real response, for %s', async (_what, options) => {
    // recordHeaders throws if helmet calls anything but setHeader/removeHeader, or is not synchronous.
    const recorded = recordHeaders(helmet(options));
    const real = await onRealResponse(options);
    internal(real.synchronous, 'helmet no longer calls next() synchronously');
    const replayed: OutgoingHttpHeaders = { 'x-powered-by': 'something' };
    for (const name of recorded.removed) delete replayed[name.toLowerCase()];
    for (const [name, value] of recorded.set) replayed[name.toLowerCase()] = value as string;
    internal(
      JSON.stringify(Object.entries(replayed).sort()) === JSON.stringify(Object.entries(real.headers).sort()),
      `the recorded headers differ from those helmet sets on a real response:\n${JSON.stringify(replayed)}\n${JSON.stringify(real.headers)}`,
    );
    expect(recorded.set.length).toBeGreaterThan(3);
    expect(real.headers['x-powered-by']).toBeUndefined();
  });
});
