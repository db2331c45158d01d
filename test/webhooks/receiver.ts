import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the receiver took: its headers and exact body. */
export interface Received {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A webhook receiver on loopback, as a customer would run one: it records every request and
 * answers with the next status of `statuses` (200 once they run out).
 */
export class Receiver {
  readonly received: Received[] = [];
  statuses: number[] = [];
  /** Answers written by hand, taken before `statuses`. */
  answers: ((res: http.ServerResponse) => void)[] = [];
  private server?: http.Server;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.received.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const answer = this.answers.shift();
        if (answer) return answer(res);
        res.statusCode = this.statuses.shift() ?? 200;
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/hooks`;
  }

  /** The events received, parsed. */
  events(): { type: string; timestamp: string; data: Record<string, unknown> }[] {
    return this.received.map(
      (r) => JSON.parse(r.body) as { type: string; timestamp: string; data: Record<string, unknown> },
    );
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
