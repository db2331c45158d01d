// bench/paced.mjs, the fixed-rate phase's load generator, against a local node:http server that
// records when each request arrives: the count, the spacing, the status counts, a slow response
// in the latencies, errors and timeouts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { paced, pacedPool, slowestWindows, type PacedRequest } from '../../bench/paced.mjs';
import { waitFor } from '../support/wait-for.js';

// Long enough that a pause of the test's own process on a busy machine is not slower than the
// requests the stall holds: CI runs two suites at once on two cores, beside an image build, which
// can hold a run's first requests for a second or more.
const STALL_MS = 3000;

interface Arrival {
  at: number;
  path: string;
  authorization?: string;
  scenario?: string | string[];
}

interface TestServer {
  url: string;
  arrivals: Arrival[];
  /** Connections closed so far. */
  closed(): number;
  close(): Promise<void>;
}

/**
 * 200 for any path but /fail (500), /slow (200 after 300 ms) and /hang (never answered); /stall
 * holds every response, its own and those of the requests after it, until STALL_MS after it came.
 */
async function startServer(): Promise<TestServer> {
  const arrivals: Arrival[] = [];
  let heldUntil = 0;
  const server = http.createServer((req, res) => {
    arrivals.push({
      at: performance.now(),
      path: req.url ?? '',
      authorization: req.headers.authorization,
      scenario: req.headers['x-scenario'],
    });
    req.resume();
    if (req.url === '/hang') return;
    const answer = () => {
      res.writeHead(req.url === '/fail' ? 500 : 200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    };
    if (req.url === '/stall') heldUntil = performance.now() + STALL_MS;
    const held = heldUntil - performance.now();
    if (req.url === '/slow') setTimeout(answer, 300);
    else if (held > 0) setTimeout(answer, held);
    else answer();
  });
  let closed = 0;
  server.on('connection', (socket) => socket.on('close', () => closed++));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    closed: () => closed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A request whose i-th sending goes to `pathOf(i)`, through setupRequest as the scenarios use it. */
function numbered(pathOf: (i: number) => string, base: PacedRequest = { method: 'GET', path: '/' }): PacedRequest {
  let i = 0;
  return { ...base, setupRequest: (req) => ({ ...req, path: pathOf(i++) }) };
}

describe('bench/paced.mjs', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  it('sends rate × duration requests evenly spaced, counts each status, and shows a slow response in the max latency', async () => {
    server = await startServer();
    const rate = 200;
    const duration = 2;
    const result = await paced({
      url: server.url,
      connections: 8,
      rate,
      duration,
      headers: { authorization: 'Bearer bench', 'x-scenario': 'global' },
      request: numbered((i) => (i % 10 === 9 ? '/fail' : i === 200 ? '/slow' : '/ok'), {
        method: 'GET',
        path: '/',
        headers: { 'x-scenario': 'own' },
      }),
    });

    expect(result.requests.sent).toBe(rate * duration);
    expect(result.requests.total).toBe(rate * duration);
    expect(server.arrivals).toHaveLength(rate * duration);
    expect(result.errors).toBe(0);
    expect(result.timeouts).toBe(0);

    // The options' headers under the request's own, as autocannon merges them.
    expect(new Set(server.arrivals.map((a) => a.authorization))).toEqual(new Set(['Bearer bench']));
    expect(new Set(server.arrivals.map((a) => a.scenario))).toEqual(new Set(['own']));

    // Evenly spread: no 100 ms window holds more than twice its share (20), plus the requests that
    // fell due while the event loop (the sender's and this server's) was held up, which go out
    // together once it runs (the longest send lag says for how long). A sender that sends a
    // second's requests at its start puts all 200 in the first window of each second.
    const first = server.arrivals[0].at;
    const windows = new Array<number>((duration * 1000) / 100).fill(0);
    for (const { at } of server.arrivals) windows[Math.min(windows.length - 1, Math.floor((at - first) / 100))]++;
    const share = (rate * 100) / 1000;
    const heldUp = Math.ceil((rate * result.sendLag.max) / 1000);
    expect(Math.max(...windows)).toBeLessThanOrEqual(2 * share + heldUp);

    expect(result.statusCodeStats).toEqual({ 200: { count: 360 }, 500: { count: 40 } });
    expect(result.non2xx).toBe(40);
    expect(result['2xx']).toBe(360);
    expect(result['5xx']).toBe(40);

    // Latencies of the 2xx responses; the one answered after 300 ms is the max. Within 1 ms of it:
    // Node's timers may fire up to a millisecond early, and the histogram keeps 3 significant digits.
    expect(result.latency.totalCount).toBe(360);
    expect(result.latency.max).toBeGreaterThanOrEqual(299);
    const { p50, p90, p99, p99_9, max } = result.latency;
    expect([p50, p90, p99, p99_9, max]).toEqual([p50, p90, p99, p99_9, max].sort((a, b) => a - b));
  });

  it('finds the slowest 1% of the responses in the windows of a stall', async () => {
    server = await startServer();
    // A rate and connections a starved process still keeps up with: the stall, not the machine,
    // must make the slowest responses.
    const rate = 200;
    const duration = 2;
    const stallAt = 240; // due at 1.2 s
    const result = await paced({
      url: server.url,
      connections: 16,
      rate,
      duration,
      request: numbered((i) => (i === stallAt ? '/stall' : '/ok')),
    });
    expect(result.latency.totalCount).toBe(rate * duration);
    // The slowest 1% are the requests that came first in the STALL_MS the server held, each
    // waiting nearly all of it: due within a window or two of the stall's start.
    const onePercent = (rate * duration) / 100;
    const { slowest } = result;
    expect(slowest).toMatchObject({ requests: onePercent, windowMs: 100 });
    expect(slowest.windows).toBeLessThanOrEqual(2);
    expect(slowest.busiest.reduce((n, w) => n + w.requests, 0)).toBe(onePercent);
    const stallDueMs = (stallAt * 1000) / rate;
    for (const w of slowest.busiest) {
      expect(w.atMs).toBeGreaterThanOrEqual(stallDueMs - 100);
      expect(w.atMs).toBeLessThanOrEqual(stallDueMs + 100);
      expect(w.maxMs).toBeGreaterThanOrEqual(STALL_MS - 50);
    }
  });

  it('counts the slowest 1% over every window it falls in, and none of requests not answered', () => {
    // Request i due at i ms; latencies rising with i, two unanswered.
    const latencies = Float64Array.from({ length: 1000 }, (_, i) => (i % 500 === 0 ? NaN : 1000 + i));
    const found = slowestWindows(latencies, 1);
    // 998 answered, so the slowest 1% is 10 requests: 990 to 999, all in the window from 900 ms.
    expect(found.requests).toBe(10);
    expect(found.windows).toBe(1);
    expect(found.busiest).toEqual([{ atMs: 900, requests: 10, maxMs: 2 }]);
    // Spread: the slowest one in each of 10 windows.
    const spread = Float64Array.from({ length: 1000 }, (_, i) => (i % 100 === 50 ? 50_000 : 1000));
    expect(slowestWindows(spread, 1)).toMatchObject({ requests: 10, windows: 10 });
    // Started 58.95 s into a UTC minute: the window from 900 ms starts at its second 59, the
    // one from 1,100 ms at the next minute's second 0.
    const minute = Date.UTC(2026, 11, 1, 3, 0);
    expect(slowestWindows(latencies, 1, 100, minute + 58_950).busiest).toEqual([
      { atMs: 900, requests: 10, maxMs: 2, secondOfMinute: 59 },
    ]);
    const late = Float64Array.from({ length: 1200 }, (_, i) => (i >= 1100 ? 50_000 : 1000));
    expect(slowestWindows(late, 1, 100, minute + 58_950).busiest).toEqual([
      { atMs: 1100, requests: 12, maxMs: 50, secondOfMinute: 0 },
    ]);
    expect(slowestWindows(new Float64Array(3).fill(NaN), 1)).toEqual({
      requests: 0,
      windows: 0,
      windowMs: 100,
      busiest: [],
    });
  });

  it('counts a refused connection as an error for every request', async () => {
    server = await startServer();
    const { url } = server;
    await server.close();
    const result = await paced({
      url,
      connections: 4,
      rate: 100,
      duration: 0.1,
      request: { method: 'GET', path: '/ok' },
    });
    expect(result.requests.sent).toBe(10);
    expect(result.requests.total).toBe(0);
    expect(result.errors).toBe(10);
    expect(result.timeouts).toBe(0);
    expect(result.firstError).toBe('ECONNREFUSED');
    expect(result.latency.totalCount).toBe(0);
  });

  it('counts a response that does not come back within the drain bound as a timeout', async () => {
    server = await startServer();
    const result = await paced({
      url: server.url,
      connections: 4,
      rate: 50,
      duration: 0.2,
      drainSeconds: 0.3,
      request: numbered((i) => (i === 0 ? '/hang' : '/ok')),
    });
    expect(result.requests.sent).toBe(10);
    expect(result.requests.total).toBe(9);
    expect(result.timeouts).toBe(1);
    expect(result.errors).toBe(1);
  });

  it('sends a body and a method as given', async () => {
    const bodies: string[] = [];
    const httpServer = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(`${req.method} ${req.headers['content-type']} ${Buffer.concat(chunks).toString()}`);
        res.writeHead(201).end();
      });
    });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    server = {
      url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
      arrivals: [],
      closed: () => 0,
      close: () => new Promise<void>((resolve) => httpServer.close(() => resolve())),
    };
    const result = await paced({
      url: server.url,
      connections: 2,
      rate: 50,
      duration: 0.1,
      request: {
        method: 'POST',
        path: '/v1/pets',
        headers: { 'content-type': 'application/json' },
        body: '{"name":"Bench pet"}',
      },
    });
    expect(result.statusCodeStats).toEqual({ 201: { count: 5 } });
    expect(bodies).toEqual(new Array(5).fill('POST application/json {"name":"Bench pet"}'));
  });

  it('goes on over the connections of a pool it is given and leaves them open; without one, closes its own', async () => {
    server = await startServer();
    const pool = pacedPool(server.url, 4);
    const options = { url: server.url, connections: 4, rate: 100, duration: 0.5, request: { path: '/ok' } };
    try {
      const warmup = await paced({ ...options, pool });
      const measured = await paced({ ...options, pool });
      expect([warmup.requests.total, measured.requests.total]).toEqual([50, 50]);
      expect(server.closed()).toBe(0);
      expect(pool.destroyed).toBe(false);
    } finally {
      await pool.destroy();
    }
    await waitFor(async () => server.closed() > 0, { what: 'the pool’s connections to close' });
    const before = server.closed();
    await paced(options);
    await waitFor(async () => server.closed() > before, { what: 'the run’s own connections to close' });
  });
});
