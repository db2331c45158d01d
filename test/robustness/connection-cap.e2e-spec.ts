import type { NestExpressApplication } from '@nestjs/platform-express';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { once } from 'node:events';
import { startTestApp } from '../support/app.js';
import { createTestDatabase, preferredDatabaseKind, TestDatabase } from '../support/databases.js';
import { waitFor } from '../support/wait-for.js';

/**
 * MAX_CONNECTIONS on a real listening server: with the cap's worth of connections open, one
 * more is closed without an answer, and once one of them is gone a new connection is served.
 */
describe('connection cap (MAX_CONNECTIONS)', () => {
  const CAP = 3;
  let db: TestDatabase;
  let app: NestExpressApplication;
  let port: number;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(preferredDatabaseKind());
    app = await startTestApp(db, { env: { MAX_CONNECTIONS: String(CAP) } });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await app?.close();
    await db?.drop();
  });

  /** A kept-alive connection that has had one answer: the server certainly holds it. */
  async function served(): Promise<{ socket: net.Socket; status: string }> {
    const socket = net.connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    await once(socket, 'connect');
    socket.write('GET /healthz HTTP/1.1\r\nHost: cap.test\r\n\r\n');
    const [data] = (await once(socket, 'data')) as [Buffer];
    return { socket, status: data.toString('latin1').split('\r\n')[0] };
  }

  /** What one more connection gets: the bytes before it was closed. */
  async function oneMore(): Promise<string> {
    const socket = net.connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    await once(socket, 'connect');
    socket.write('GET /healthz HTTP/1.1\r\nHost: cap.test\r\nConnection: close\r\n\r\n');
    await once(socket, 'close');
    return Buffer.concat(chunks).toString('latin1');
  }

  it('closes the connection beyond the cap at once, and serves again when one is gone', async () => {
    const server = app.getHttpServer() as Server;
    expect(server.maxConnections).toBe(CAP);
    const held = [];
    for (let i = 0; i < CAP; i++) held.push(await served());
    expect(held.map((h) => h.status)).toEqual(Array(CAP).fill('HTTP/1.1 200 OK'));

    const dropped = once(server, 'drop');
    expect(await oneMore()).toBe('');
    await dropped;

    held[0].socket.destroy();
    await waitFor(() => new Promise<boolean>((resolve) => server.getConnections((_e, n) => resolve(n < CAP))), {
      what: 'the server to see a held connection close',
    });
    expect((await oneMore()).split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  });
});
