import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort, RunningService, startService } from '../support/built-service.js';
import { createTestDatabase, TestDatabase } from '../support/databases.js';
import { haproxyVersion, RunningHaproxy, startHaproxy } from '../support/haproxy.js';
import { redisEnv } from '../support/redis-env.js';
import { waitFor } from '../support/wait-for.js';
import { Answer, send } from './load.js';

/*
 * The balancer's own answers (deploy/haproxy/haproxy.cfg, "http-error") and the request id it
 * forwards. Three balancers with the shipped configuration, each with two servers:
 *   - `live`: one built instance (on PostgreSQL and a Redis prefix of its own) and a dead port;
 *   - `down`: two dead ports, so every request gets the balancer's 503;
 *   - `broken`: a stand-in that passes the health check but answers /junk with something that is
 *     not HTTP (502) and never answers /hang (504, with HAPROXY_TIMEOUT_SERVER at 1 s).
 */
process.env.DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/postgres';
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';

const LOGS = path.resolve('.tmp/cluster-logs');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A port nothing listens on: the port of a server that was opened and closed. */
const deadPort = freePort;

/** Passes HAProxy's health check; /junk gets a line that is not HTTP, /hang never an answer. */
async function standIn(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const target = head.split(' ')[1];
      if (target === '/readyz') socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
      else if (target === '/junk') socket.end('this is not HTTP\r\n\r\n');
      // /hang: the request stays unanswered until the balancer gives up on it.
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function errorBody(a: Answer): unknown {
  expect(a.headers['content-type']).toBe('application/json');
  return JSON.parse(a.body);
}

describe(`the balancer's own answers and request ids (${haproxyVersion()})`, () => {
  let db: TestDatabase;
  let cleanupRedis: () => Promise<void>;
  let instance: RunningService;
  let stand: Awaited<ReturnType<typeof standIn>>;
  const balancers: Record<'live' | 'down' | 'broken', RunningHaproxy> = {} as never;

  const serverStatus = async (b: RunningHaproxy, name: string) => (await b.stats()).servers.get(name)?.status ?? '';
  const until = (b: RunningHaproxy, name: string, wanted: string) =>
    waitFor(async () => (await serverStatus(b, name)) === wanted || undefined, {
      what: `HAProxy to see ${name} ${wanted}`,
      timeoutMs: 30_000,
    });

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const redis = redisEnv('balancer-answers');
    cleanupRedis = redis.cleanup;
    instance = await startService({ ...db.env, ...redis.env, LOG_LEVEL: 'info', TRUST_PROXY: '1' }, 60_000);
    stand = await standIn();

    balancers.live = await startHaproxy({
      app1: `127.0.0.1:${instance.port}`,
      app2: `127.0.0.1:${await deadPort()}`,
    });
    balancers.down = await startHaproxy({
      app1: `127.0.0.1:${await deadPort()}`,
      app2: `127.0.0.1:${await deadPort()}`,
    });
    balancers.broken = await startHaproxy(
      { app1: `127.0.0.1:${stand.port}`, app2: `127.0.0.1:${await deadPort()}` },
      { HAPROXY_TIMEOUT_SERVER: '1s' },
    );
    await Promise.all([
      until(balancers.live, 'app1', 'UP'),
      until(balancers.live, 'app2', 'DOWN'),
      until(balancers.down, 'app1', 'DOWN'),
      until(balancers.down, 'app2', 'DOWN'),
      until(balancers.broken, 'app1', 'UP'),
      until(balancers.broken, 'app2', 'DOWN'),
    ]);
  }, 240_000);

  afterAll(async () => {
    mkdirSync(LOGS, { recursive: true });
    for (const [name, b] of Object.entries(balancers)) {
      writeFileSync(path.join(LOGS, `balancer-answers-haproxy-${name}.log`), b.output());
    }
    if (instance) writeFileSync(path.join(LOGS, 'balancer-answers-app.log'), instance.output());
    await Promise.all(Object.values(balancers).map((b) => b.stop()));
    await instance?.stop('SIGKILL');
    await stand?.close();
    await cleanupRedis?.();
    await db?.drop();
  }, 60_000);

  it('with every instance down: 503 with the Error body, Retry-After and a request id of its own', async () => {
    const answers = [
      await send(`${balancers.down.url}/v1/pets`),
      await send(`${balancers.down.url}/v1/pets`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ask2_x' },
        body: '{"name":"Rex","categoryId":1}',
      }),
    ];
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(errorBody(a)).toEqual({
        code: 'service_unavailable',
        message: expect.stringContaining('no instance'),
        status: 503,
        requestId: a.headers['x-request-id'],
      });
      expect(a.headers['x-request-id']).toMatch(UUID);
      expect(a.headers['retry-after']).toBe('5');
      expect(a.headers['cache-control']).toBe('no-store');
    }
    expect(answers[0].headers['x-request-id']).not.toBe(answers[1].headers['x-request-id']);

    // A well-formed id of the client's is kept, a malformed one replaced.
    const kept = await send(`${balancers.down.url}/v1/pets`, { headers: { 'X-Request-Id': 'support-ticket.42_a' } });
    expect([kept.headers['x-request-id'], (errorBody(kept) as { requestId: string }).requestId]).toEqual([
      'support-ticket.42_a',
      'support-ticket.42_a',
    ]);
    const replaced = await send(`${balancers.down.url}/v1/pets`, { headers: { 'X-Request-Id': '"}, {"x": 1' } });
    expect(replaced.headers['x-request-id']).toMatch(UUID);
    expect(errorBody(replaced)).toMatchObject({ status: 503, requestId: replaced.headers['x-request-id'] });
  });

  it('an answer that is not HTTP is a 502, no answer in time a 504: the Error body, no Retry-After', async () => {
    const junk = await send(`${balancers.broken.url}/junk`);
    const hang = await send(`${balancers.broken.url}/hang`);
    for (const [a, status] of [
      [junk, 502],
      [hang, 504],
    ] as const) {
      expect(a.status).toBe(status);
      expect(errorBody(a)).toEqual({
        code: 'service_unavailable',
        message: expect.stringContaining('may or may not have been done'),
        status,
        requestId: a.headers['x-request-id'],
      });
      expect(a.headers['x-request-id']).toMatch(UUID);
      expect(a.headers['retry-after']).toBeUndefined();
    }
  });

  it('the id the balancer makes is the one the instance logs and answers with', async () => {
    const a = await send(`${balancers.live.url}/v1/pets`);
    expect(a.status).toBe(401);
    const id = a.headers['x-request-id'] as string;
    expect(id).toMatch(UUID);
    expect(JSON.parse(a.body)).toMatchObject({ code: 'missing_api_key', requestId: id });
    // The balancer's log line and the instance's access line both name it.
    await waitFor(() => balancers.live.output().includes(`"GET /v1/pets HTTP/1.1" ${id}`) || undefined, {
      what: "the balancer's log line with the request id",
    });
    await waitFor(() => instance.output().includes(`"requestId":"${id}"`) || undefined, {
      what: "the instance's log line with the request id",
    });

    // The client's own id when well formed; a malformed one, or two, are replaced by the balancer's.
    const own = await send(`${balancers.live.url}/v1/pets`, { headers: { 'X-Request-Id': 'client-chosen-1' } });
    expect([own.headers['x-request-id'], JSON.parse(own.body).requestId]).toEqual([
      'client-chosen-1',
      'client-chosen-1',
    ]);
    for (const headers of [{ 'X-Request-Id': 'has space' }, { 'X-Request-Id': ['one', 'two'] as unknown as string }]) {
      const r = await send(`${balancers.live.url}/v1/pets`, { headers });
      const rid = r.headers['x-request-id'] as string;
      expect(rid).toMatch(UUID);
      expect(JSON.parse(r.body)).toMatchObject({ code: 'missing_api_key', requestId: rid });
      await waitFor(() => balancers.live.output().includes(`HTTP/1.1" ${rid}`) || undefined, {
        what: "the balancer's log line with the request id it made",
      });
    }
  });

  it('exports every balancer metric the alerting rules read, with the labels they select on', async () => {
    const rules = readFileSync('deploy/prometheus/alerts.yml', 'utf8');
    // Each haproxy_* selector of the rules: its name and its proxy/code/state matchers.
    const selectors = [...rules.matchAll(/(haproxy_[a-z_]+)\{([^}]*)\}/g)].map(([, name, labels]) => ({
      name,
      labels: [...labels.matchAll(/(proxy|code|state)(=~?)"([^"]*)"/g)].map(([, label, op, value]) => ({
        label,
        value: op === '=~' ? new RegExp(`^(?:${value})$`) : new RegExp(`^${value}$`),
      })),
    }));
    expect(selectors.map((s) => s.name)).toEqual(
      expect.arrayContaining(['haproxy_frontend_http_responses_total', 'haproxy_backend_active_servers']),
    );
    const exported = (await send(`${balancers.live.statsUrl}/metrics`)).body.split('\n');
    const missing = selectors.filter(
      (s) =>
        !exported.some((line) => {
          const m = /^([a-z_]+)\{([^}]*)\} /.exec(line);
          if (!m || m[1] !== s.name) return false;
          const labels = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
          return s.labels.every((l) => l.value.test(labels[l.label] ?? ''));
        }),
    );
    expect(missing.map((s) => s.name)).toEqual([]);
  });
});
