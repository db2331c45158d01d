import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the proxy saw it. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** An answer the proxy makes up instead of the service's. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * What to do with the n-th request (1-based): pass it on; pass it on but lose the service's
 * answer and send another (the request was processed, the client never heard); answer
 * without asking the service; or drop the connection.
 */
export type Action = { forward: true } | { forwardThenAnswer: Answer } | { answer: Answer } | { reset: true };

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host']);

/**
 * A tiny HTTP proxy on loopback in front of the real service, to inject the refusals and
 * failures a client meets on the way (a balancer's 503, a lost response, a reset connection).
 */
export class LoopbackProxy {
  readonly seen: Seen[] = [];
  private server?: http.Server;

  constructor(
    private readonly target: string,
    private readonly decide: (seen: Seen, n: number) => Action,
  ) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      void this.handle(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const seen: Seen = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
    this.seen.push(seen);
    const action = this.decide(seen, this.seen.length);
    if ('reset' in action) {
      req.socket.destroy();
      return;
    }
    if ('answer' in action) return send(res, action.answer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name))
        headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const upstream = await fetch(`${this.target}${seen.url}`, {
      method: seen.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    const body = await upstream.text();
    if ('forwardThenAnswer' in action) return send(res, action.forwardThenAnswer);
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name) && name !== 'content-encoding') out[name] = value;
    });
    send(res, { status: upstream.status, headers: out, body });
  }
}

function send(res: http.ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
  res.end(answer.body ?? '');
}

/** A 503 as a balancer or the service sends it: Error body, Retry-After. */
export function unavailable(retryAfter = '1', requestId = 'proxy-503'): Answer {
  return {
    status: 503,
    headers: { 'retry-after': retryAfter, 'x-request-id': requestId },
    body: JSON.stringify({ code: 'service_unavailable', message: 'Try again shortly.', status: 503 }),
  };
}
