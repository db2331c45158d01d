import net from 'node:net';

/**
 * A TCP proxy in front of a real server that a test can cut and restore: "the database went
 * away" without stopping the machine's PostgreSQL.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private frozen = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A started proxy in front of the server of `databaseUrl`, and the URL that reaches it through the proxy. */
  static async forDatabase(databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
    const url = new URL(databaseUrl);
    const proxy = new TcpProxy(url.hostname, Number(url.port || 5432));
    url.hostname = '127.0.0.1';
    url.port = String(await proxy.start());
    return { proxy, url: url.toString() };
  }

  async start(port = this.port): Promise<number> {
    this.frozen = false;
    this.server = net.createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => client.destroy());
      if (this.frozen) {
        client.pause(); // accepted, never answered
        return;
      }
      const upstream = net.connect(this.targetPort, this.targetHost);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      this.sockets.add(upstream);
      upstream.on('close', () => {
        this.sockets.delete(upstream);
        this.pairs.delete(pair);
      });
      for (const s of pair) {
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  /**
   * A black hole, as when a network partition drops packets: open connections stay open but
   * carry nothing more either way, and new ones are accepted but never answered. stop() ends it.
   */
  freeze(): void {
    this.frozen = true;
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Refuses new connections and resets every open one. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    this.pairs.clear();
    if (this.server) await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }
}
