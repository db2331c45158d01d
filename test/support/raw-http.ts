import net from 'node:net';

/**
 * HTTP/1.1 over a bare socket, for what an HTTP client library refuses to send: control
 * characters and raw bytes in headers or the request target, headers over the size limit,
 * contradictory framing, requests that never finish.
 */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The whole response as received. */
  raw: Buffer;
}

export interface RawRequest {
  method?: string;
  /** The request target, sent as given (no encoding). */
  target: string | Buffer;
  /** Header lines, sent as given; Host and Connection: close are added unless present. */
  headers?: (string | Buffer)[];
  body?: Buffer | string;
  /** Adds Content-Length for the body unless a header already frames it. Default true. */
  frame?: boolean;
}

export function buildRequest(req: RawRequest): Buffer {
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.from(req.body);
  const headers = (req.headers ?? []).map((h) => Buffer.from(h));
  const names = headers.map((h) => h.toString('latin1').split(':')[0].trim().toLowerCase());
  const lines: Buffer[] = [
    Buffer.concat([Buffer.from(`${req.method ?? 'GET'} `), Buffer.from(req.target), Buffer.from(' HTTP/1.1')]),
  ];
  if (!names.includes('host')) lines.push(Buffer.from('Host: fuzz.test'));
  if (!names.includes('connection')) lines.push(Buffer.from('Connection: close'));
  lines.push(...headers);
  const framed = names.includes('content-length') || names.includes('transfer-encoding');
  if (req.frame !== false && !framed && (body.length > 0 || ['POST', 'PUT', 'PATCH'].includes(req.method ?? 'GET'))) {
    lines.push(Buffer.from(`Content-Length: ${body.length}`));
  }
  const crlf = Buffer.from('\r\n');
  return Buffer.concat([...lines.flatMap((l) => [l, crlf]), crlf, body]);
}

/**
 * Sends bytes, reads until the server closes the connection (or timeoutMs), parses the answer.
 * `end` half-closes after sending, as a client with nothing more to say.
 */
export function rawExchange(port: number, bytes: Buffer, timeoutMs = 10_000, end = false): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      fn();
    };
    const timer = setTimeout(
      () => settle(() => reject(new Error(`no complete answer within ${timeoutMs} ms`))),
      timeoutMs,
    );
    socket.on('data', (d) => {
      chunks.push(d);
      // Complete as soon as a whole response is in, even on a connection kept open.
      const raw = Buffer.concat(chunks);
      if (isComplete(raw)) settle(() => resolve(parseResponse(raw)));
    });
    // The server may answer and close before it has read everything we sent (a 431, a 413).
    socket.on('error', () => {});
    socket.on('close', () =>
      settle(() => {
        try {
          resolve(parseResponse(Buffer.concat(chunks)));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      }),
    );
    socket.write(bytes);
    if (end) socket.end();
  });
}

/** Whether raw holds a whole final response framed by Content-Length or chunked encoding. */
function isComplete(raw: Buffer): boolean {
  let res: RawResponse;
  try {
    res = parseResponse(raw);
  } catch {
    return false;
  }
  const start = res.raw.indexOf('\r\n\r\n') + 4;
  const after = res.raw.length - start;
  if (res.headers['content-length'] !== undefined) return after >= Number(res.headers['content-length']);
  if (res.headers['transfer-encoding']?.toLowerCase() === 'chunked')
    return res.raw.subarray(start).includes('0\r\n\r\n');
  return false;
}

export function parseResponse(received: Buffer): RawResponse {
  // Interim 1xx responses (100 Continue) precede the final one; `raw` keeps them.
  let raw = received;
  while (/^HTTP\/1\.[01] 1\d\d /.test(raw.subarray(0, 13).toString('latin1'))) {
    const next = raw.indexOf('\r\n\r\n');
    if (next < 0) break;
    raw = raw.subarray(next + 4);
  }
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no HTTP response (connection closed after ${raw.length} bytes)`);
  const [statusLine, ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!m) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') body = unchunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status: Number(m[1]), headers, body, raw: received };
}

function unchunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!size) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}
