import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { issueApiKeyIn } from '../support/api-keys.js';
import { freePort, RunningService, startService } from '../support/built-service.js';
import { createTestDatabase, TestDatabase } from '../support/databases.js';
import { haproxyVersion, RunningHaproxy, ServerStat, startHaproxy } from '../support/haproxy.js';
import { redisEnv } from '../support/redis-env.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';
import { Answer, Load, LoadFigures, send } from './load.js';

/*
 * The cluster test (npm run test:cluster): HAProxy with the shipped deploy/haproxy/haproxy.cfg in
 * front of two instances of the built service, on PostgreSQL (a fresh database) and Redis (a key
 * prefix of its own, reached through a TCP proxy the test can cut: the machine's Redis is shared
 * and is never stopped). Everything goes through the balancer, on loopback.
 *
 * Needs PostgreSQL and Redis (DATABASE_URL and REDIS_URL, by default the machine's at
 * 127.0.0.1:5432 and :6379) and the haproxy binary. SHUTDOWN_DELAY_MS and HAPROXY_CHECK_INTER /
 * HAPROXY_CHECK_FASTINTER set around the test reach the instances and the balancer, to show
 * what a broken drain does (docs/deployment.md, "Rolling deploys behind HAProxy").
 */
process.env.DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/postgres';
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';

const SHUTDOWN_DELAY_MS = process.env.SHUTDOWN_DELAY_MS ?? '5000';
const LOGS = path.resolve('.tmp/cluster-logs');

interface Instance {
  name: 'app1' | 'app2';
  port: number;
  svc: RunningService;
  /** Output of earlier processes of this instance (before a restart). */
  previous: string;
}

/** One counter or gauge of an instance's /metrics (summed over series whose labels contain `labels`). */
async function metric(instance: Instance, name: string, labels = ''): Promise<number> {
  const text = (await send(`${instance.svc.url}/metrics`)).body;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === name && (m[2] ?? '').includes(labels)) sum += Number(m[3]);
  }
  return sum;
}

function rateLimit(a: Answer): { remaining: number; reset: number } {
  return { remaining: Number(a.headers['x-ratelimit-remaining']), reset: Number(a.headers['x-ratelimit-reset']) };
}

function print(scenario: string, figures: Record<string, unknown>): void {
  console.log(
    `[cluster] ${scenario}: ${Object.entries(figures)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ')}`,
  );
}

describe(`two instances behind HAProxy (${haproxyVersion()}), on PostgreSQL and Redis`, () => {
  let db: TestDatabase;
  let sql: pg.Client;
  let haproxy: RunningHaproxy;
  let redisProxy: TcpProxy;
  let cleanupRedis: () => Promise<void>;
  let instanceEnv: Record<string, string>;
  let apiKey: string;
  let freeKey: string;
  const instances: Instance[] = [];

  const stats = async (): Promise<Map<string, ServerStat>> => (await haproxy.stats()).servers;
  const status = async (name: string): Promise<string> => (await stats()).get(name)?.status ?? 'missing';
  const untilStatus = (name: string, wanted: (s: string) => boolean, timeoutMs = 30_000) =>
    waitFor(async () => ((s) => (wanted(s) ? s : undefined))(await status(name)), {
      what: `HAProxy to see ${name} ${wanted.toString()}`,
      timeoutMs,
    });
  const isUp = (s: string) => s === 'UP';
  const isDown = (s: string) => s.startsWith('DOWN') || s.includes('MAINT');
  /** HAProxy's retries and redispatches so far, and the connection and response errors behind them. */
  const retries = async () => {
    const { backend } = await haproxy.stats();
    return { retries: backend.wretr, redispatches: backend.wredis, errors: backend.econ + backend.eresp };
  };

  async function start(instance: Pick<Instance, 'port'>): Promise<RunningService> {
    const svc = await startService(instanceEnv, 60_000, instance.port);
    if (svc.child.exitCode !== null)
      throw new Error(`instance on port ${instance.port} exited at start:\n${svc.output()}`);
    return svc;
  }

  async function restart(instance: Instance): Promise<void> {
    instance.previous += instance.svc.output();
    instance.svc = await start(instance);
    await untilStatus(instance.name, isUp);
  }

  /** Pets stored under a name prefix: name → ids. */
  async function stored(prefix: string): Promise<Map<string, string[]>> {
    const { rows } = await sql.query<{ name: string; id: string }>(
      'SELECT name, id::text AS id FROM pets WHERE name LIKE $1',
      [`${prefix}-%`],
    );
    const byName = new Map<string, string[]>();
    for (const r of rows) byName.set(r.name, [...(byName.get(r.name) ?? []), r.id]);
    return byName;
  }

  /** Every acknowledged create stored exactly once, under the id it was answered with; nothing twice. */
  function expectStoredOnce(figures: LoadFigures, found: Map<string, string[]>): void {
    const missing = [...figures.acknowledged].filter(([name, id]) => found.get(name)?.join() !== id);
    const twice = [...found].filter(([, ids]) => ids.length > 1);
    expect({ missing, twice }).toEqual({ missing: [], twice: [] });
    // And nothing stored that the load did not ask for.
    const asked = new Set([...figures.acknowledged.keys(), ...figures.unacknowledged]);
    expect([...found.keys()].filter((n) => !asked.has(n))).toEqual([]);
  }

  /** Clients of the load, each on its own kept-alive connection to HAProxy. */
  const CLIENTS = 8;

  function load(namePrefix: string): Load {
    return new Load({
      url: haproxy.url,
      apiKey,
      namePrefix,
      concurrency: CLIENTS,
      ratePerSecond: 150,
      maxOperations: 20_000,
      maxDurationMs: 90_000,
      createRetryBudgetMs: 10_000,
    });
  }

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    sql = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await sql.connect();
    apiKey = (await issueApiKeyIn(db)).key;
    freeKey = (await issueApiKeyIn(db, { plan: 'free' })).key;

    const redis = redisEnv('cluster');
    cleanupRedis = redis.cleanup;
    const redisUrl = new URL(redis.env.REDIS_URL);
    redisProxy = new TcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
    await redisProxy.start();
    redisUrl.hostname = '127.0.0.1';
    redisUrl.port = String(redisProxy.port);

    instanceEnv = {
      ...db.env,
      ...redis.env,
      REDIS_URL: redisUrl.toString(),
      LOG_LEVEL: 'info',
      // What the shipped haproxy.cfg asks of the service (see its header).
      TRUST_PROXY: '1',
      SHUTDOWN_DELAY_MS,
      SHUTDOWN_TIMEOUT_MS: '10000',
      KEEP_ALIVE_TIMEOUT_MS: '65000',
      ENABLE_TEST_DELAY: 'true',
    };
    for (const name of ['app1', 'app2'] as const) {
      const port = await freePort();
      instances.push({ name, port, svc: await start({ port }), previous: '' });
    }
    haproxy = await startHaproxy({ app1: `127.0.0.1:${instances[0].port}`, app2: `127.0.0.1:${instances[1].port}` });
    await untilStatus('app1', isUp);
    await untilStatus('app2', isUp);
  }, 180_000);

  afterAll(async () => {
    // Logs of every process, for a failed run: .tmp/cluster-logs.
    mkdirSync(LOGS, { recursive: true });
    if (haproxy) writeFileSync(path.join(LOGS, 'haproxy.log'), haproxy.output());
    for (const i of instances) writeFileSync(path.join(LOGS, `${i.name}.log`), i.previous + i.svc.output());
    await haproxy?.stop();
    await Promise.all(instances.map((i) => i.svc.stop('SIGKILL')));
    await redisProxy?.stop();
    await cleanupRedis?.();
    await sql?.end();
    await db?.drop();
  }, 60_000);

  it('counts a free key across instances: its 61st request in a minute is a 429, whichever instance answers', async () => {
    const headers = { Authorization: `Bearer ${freeKey}` };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const rejectedBefore = await Promise.all(
      instances.map((i) => metric(i, 'rate_limit_rejections_total', 'plan="free"')),
    );
    try {
      // The minute is a UTC clock minute: requests are counted per window (X-RateLimit-Reset),
      // and the run is valid if the 429 comes as the 61st request of its window.
      let window = 0;
      let inWindow = 0;
      let refused: Answer | undefined;
      for (let n = 0; n < 130 && !refused; n++) {
        const a = await send(`${haproxy.url}/v1/pets?limit=1`, { agent, headers });
        const { remaining, reset } = rateLimit(a);
        if (reset !== window) [window, inWindow] = [reset, 0];
        inWindow++;
        if (a.status === 429) refused = a;
        else {
          expect(a.status).toBe(200);
          expect(remaining).toBe(60 - inWindow);
        }
      }
      expect(refused).toBeDefined();
      expect(inWindow).toBe(61);
      expect(JSON.parse(refused!.body)).toEqual({
        code: 'rate_limit_exceeded',
        message: expect.any(String),
        status: 429,
        requestId: refused!.headers['x-request-id'],
      });
      expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);

      // More requests until each instance has refused at least one (round robin: the next one).
      const more: number[] = [];
      const rejected = async () =>
        Promise.all(
          instances.map((i, k) =>
            metric(i, 'rate_limit_rejections_total', 'plan="free"').then((v) => v - rejectedBefore[k]),
          ),
        );
      while (more.length < 8 && (await rejected()).some((r) => r === 0)) {
        const a = await send(`${haproxy.url}/v1/pets?limit=1`, { agent, headers });
        if (rateLimit(a).reset !== window) break; // a new minute began: nothing more to learn
        more.push(a.status);
      }
      const perInstance = await rejected();
      print('free key, 61st request', {
        sent: inWindow + more.length,
        ok: inWindow - 1,
        refused: 1 + more.length,
        refusedByInstance: perInstance,
      });
      expect(more.every((s) => s === 429)).toBe(true);
      expect(perInstance.every((r) => r >= 1)).toBe(true);
    } finally {
      agent.destroy();
    }
  }, 60_000);

  it('counts requests without a key per client address behind the balancer, whatever X-Forwarded-For the client sends', async () => {
    const client = (localAddress: string) =>
      new http.Agent({ keepAlive: true, maxSockets: 1, localAddress } as http.AgentOptions);
    const a2 = client('127.0.0.2');
    const a3 = client('127.0.0.3');
    // Half of 127.0.0.2's requests claim to come from elsewhere, one of them from 127.0.0.3.
    const spoofs = ['203.0.113.9', '127.0.0.3', '10.1.2.3, 198.51.100.7'];
    try {
      let window = 0;
      let inWindow = 0;
      let refused: Answer | undefined;
      for (let n = 0; n < 130 && !refused; n++) {
        const headers: Record<string, string> = n % 2 === 1 ? { 'X-Forwarded-For': spoofs[n % 3] } : {};
        const a = await send(`${haproxy.url}/v1/pets`, { agent: a2, headers, localAddress: '127.0.0.2' });
        const { remaining, reset } = rateLimit(a);
        if (reset !== window) [window, inWindow] = [reset, 0];
        inWindow++;
        if (a.status === 429) refused = a;
        else {
          expect(a.status).toBe(401);
          expect(remaining).toBe(60 - inWindow);
        }
      }
      expect(inWindow).toBe(61);
      expect(JSON.parse(refused!.body)).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });

      // 127.0.0.2 stays refused even when it says it is someone else …
      const spoofed = await send(`${haproxy.url}/v1/pets`, {
        agent: a2,
        headers: { 'X-Forwarded-For': '192.0.2.200' },
        localAddress: '127.0.0.2',
      });
      // … and 127.0.0.3 has its own count, even when it says it is 127.0.0.2.
      const other = await send(`${haproxy.url}/v1/pets`, {
        agent: a3,
        headers: { 'X-Forwarded-For': '127.0.0.2' },
        localAddress: '127.0.0.3',
      });
      const other2 = await send(`${haproxy.url}/v1/pets`, { agent: a3, localAddress: '127.0.0.3' });
      print('per-address limits', {
        sent: inWindow + 3,
        '127.0.0.2': `${inWindow - 1} x 401 then 429 (half with a forged X-Forwarded-For), forged again: ${spoofed.status}`,
        '127.0.0.3': `${other.status} remaining ${rateLimit(other).remaining}, ${other2.status} remaining ${rateLimit(other2).remaining}`,
      });
      if (rateLimit(spoofed).reset === window) expect(spoofed.status).toBe(429);
      expect([other.status, other2.status]).toEqual([401, 401]);
      // Its own window's count: the two requests are its first two (unless a minute began between them).
      if (rateLimit(other).reset === rateLimit(other2).reset) {
        expect(rateLimit(other).remaining - rateLimit(other2).remaining).toBe(1);
        expect(rateLimit(other).remaining).toBeGreaterThan(1);
      }
    } finally {
      a2.destroy();
      a3.destroy();
    }
  }, 60_000);

  it('rolling restart under steady load: no failed request, no retry needed, every acknowledged create stored once', async () => {
    const before = await retries();
    const traffic = load('rolling');
    traffic.start();
    const steps: string[] = [];
    try {
      await traffic.progress(200);
      for (const instance of instances) {
        const t0 = Date.now();
        let exitedAfter = 0;
        void instance.svc.exited.then(() => (exitedAfter = Date.now() - t0));
        const stopping = instance.svc.stop('SIGTERM');
        await untilStatus(instance.name, isDown);
        const outAfter = Date.now() - t0;
        const code = await stopping;
        expect(code).toBe(0);
        await restart(instance);
        steps.push(
          `${instance.name}: SIGTERM; out of rotation after ${outAfter} ms; exited ${code} after ${exitedAfter} ms; back in rotation after ${Date.now() - t0} ms`,
        );
        // The restarted instance takes its share before the next one goes.
        await traffic.progress(200);
      }
    } finally {
      await traffic.stop();
    }
    const after = await retries();
    const f = traffic.figures;
    const found = await stored('rolling');
    print('rolling restart', {
      sent: f.sent,
      failed: f.failed,
      operations: f.operations,
      acknowledged: f.acknowledged.size,
      found: found.size,
      haproxyRetries: after.retries - before.retries,
      haproxyRedispatches: after.redispatches - before.redispatches,
      haproxyServerErrors: after.errors - before.errors,
      slowestMs: f.slowestMs,
      shutdownDelayMs: SHUTDOWN_DELAY_MS,
    });
    for (const s of steps) console.log(`[cluster]   ${s}`);
    if (f.samples.length > 0) console.log(`[cluster]   failures: ${f.samples.join(' | ')}`);
    expect(f.failed).toBe(0);
    expect(f.acknowledged.size).toBeGreaterThan(50);
    expectStoredOnce(f, found);
    // Lossless by itself: no request reached a closed instance, so the balancer never had to
    // retry one elsewhere. (A broken drain shows here first: HAProxy's retries hide it from
    // these clients, at the cost of latency, but not from a POST without an Idempotency-Key
    // whose connection closes under it.)
    expect(after.errors - before.errors).toBe(0);
    expect(after.retries - before.retries).toBe(0);
    expect(after.redispatches - before.redispatches).toBe(0);
  }, 150_000);

  it('one instance SIGKILLed under load: only requests it had in flight fail, and no create is stored twice', async () => {
    const [survivor, victim] = instances;
    // Requests held 8 s on the victim (X-Test-Delay-Ms), one of each kind per round: HAProxy
    // sends new requests only to the victim while the survivor is set to drain.
    const admin = (state: string) => haproxySocket(`set server app/${survivor.name} state ${state}`);
    const held: { kind: 'get' | 'keyed' | 'keyless'; name?: string; answer: Promise<Answer> }[] = [];
    const hold = { 'X-Test-Delay-Ms': '8000', Authorization: `Bearer ${apiKey}` };
    const post = (name: string, extra: Record<string, string>) =>
      send(`${haproxy.url}/v1/pets`, {
        method: 'POST',
        headers: { ...hold, 'Content-Type': 'application/json', ...extra },
        body: JSON.stringify({ name, categoryId: 7 }),
      }).catch((err: Error) => ({ status: 0, headers: {}, body: err.message }));
    await admin('drain');
    try {
      await untilStatus(survivor.name, (s) => s === 'DRAIN');
      for (let round = 0; round < 3; round++) {
        held.push({
          kind: 'get',
          answer: send(`${haproxy.url}/v1/pets?limit=1`, { headers: hold }).catch((err: Error) => ({
            status: 0,
            headers: {},
            body: err.message,
          })),
        });
        const keyed = `kill-held-keyed-${round}-${randomUUID().slice(0, 8)}`;
        held.push({ kind: 'keyed', name: keyed, answer: post(keyed, { 'Idempotency-Key': randomUUID() }) });
        const keyless = `kill-held-keyless-${round}-${randomUUID().slice(0, 8)}`;
        held.push({ kind: 'keyless', name: keyless, answer: post(keyless, {}) });
      }
      // All nine are on the victim: HAProxy counts them as its current sessions (the load has not
      // started and the survivor is drained, so nothing else is there). The victim's own in-flight
      // gauge would also count HAProxy's health checks and the scrape itself, which come and go.
      let early: Answer | undefined;
      for (const h of held) void h.answer.then((a) => (early ??= a));
      const reached = await waitFor(
        async () => (early ? 'answered early' : (await stats()).get(victim.name)!.scur >= 9 ? 'held' : undefined),
        { what: 'the held requests to reach the victim' },
      );
      if (early)
        throw new Error(`a held request was answered before the kill (${reached}): ${early.status} ${early.body}`);
    } finally {
      await admin('ready');
    }
    await untilStatus(survivor.name, isUp);

    const before = await retries();
    const traffic = load('kill');
    traffic.start();
    let inFlightAtKill: number;
    try {
      await traffic.progress(60);
      inFlightAtKill = traffic.inFlight;
      victim.svc.child.kill('SIGKILL');
      await victim.svc.exited;
      await untilStatus(victim.name, isDown);
      await restart(victim);
      await traffic.progress(200);
    } finally {
      await traffic.stop();
    }
    const answers = await Promise.all(held.map(async (h) => ({ ...h, result: await h.answer })));
    const after = await retries();
    const f = traffic.figures;
    const found = await stored('kill');
    const heldFailed = answers.filter((a) => a.result.status < 200 || a.result.status > 299).length;
    print('SIGKILL under load', {
      sent: f.sent + held.length,
      failed: f.failed + heldFailed,
      operationsFailed: f.operationsFailed + heldFailed,
      inFlightAtKill: inFlightAtKill + held.length,
      acknowledged: f.acknowledged.size + answers.filter((a) => a.result.status === 201).length,
      found: found.size,
      held: answers.map((a) => `${a.kind}:${a.result.status}`).join(','),
      haproxyRetries: after.retries - before.retries,
      haproxyRedispatches: after.redispatches - before.redispatches,
      haproxyServerErrors: after.errors - before.errors,
      slowestMs: f.slowestMs,
    });
    if (f.samples.length > 0) console.log(`[cluster]   failures: ${f.samples.join(' | ')}`);

    // The held requests: reads and creates with an Idempotency-Key were retried on the survivor;
    // creates without one were sent, got no answer, and were not repeated (502).
    expect(answers.filter((a) => a.kind === 'get').map((a) => a.result.status)).toEqual([200, 200, 200]);
    expect(answers.filter((a) => a.kind === 'keyed').map((a) => a.result.status)).toEqual([201, 201, 201]);
    expect(answers.filter((a) => a.kind === 'keyless').map((a) => a.result.status)).toEqual([502, 502, 502]);
    for (const a of answers.filter((x) => x.name)) {
      expect([a.name, found.get(a.name!)?.length ?? 0]).toEqual([a.name, a.kind === 'keyed' ? 1 : 0]);
    }
    // The load: failures bounded by what was in flight when the instance died, plus at most one
    // per client connection: with `http-reuse never` a client connection is tied to its instance's,
    // and a create without an Idempotency-Key sent on it as HAProxy closes it after the kill gets
    // "socket hang up" and is rightly not repeated.
    expect(f.operationsFailed).toBeLessThanOrEqual(inFlightAtKill + CLIENTS);
    expectStoredOnce(f, new Map([...found].filter(([name]) => !name.startsWith('kill-held-'))));
  }, 150_000);

  it('Redis stopped and started again while traffic flows: no client error', async () => {
    const traffic = load('redis');
    traffic.start();
    const readiness = async (i: Instance) =>
      (JSON.parse((await send(`${i.svc.url}/readyz`)).body) as { status: string }).status;
    const errorsBefore = await Promise.all(instances.map((i) => metric(i, 'redis_errors_total')));
    let degraded: string[];
    try {
      await traffic.progress(150);
      await redisProxy.stop();
      // Both instances see it (readiness stays 200 "degraded": they keep serving) …
      degraded = await Promise.all(
        instances.map((i) =>
          waitFor(async () => ((s) => (s === 'degraded' ? s : undefined))(await readiness(i)), {
            what: `${i.name} to report Redis down`,
          }),
        ),
      );
      await traffic.progress(300);
      expect([await status('app1'), await status('app2')]).toEqual(['UP', 'UP']);
      await redisProxy.start();
      // … and go back to it.
      await Promise.all(
        instances.map((i) =>
          waitFor(async () => ((s) => (s === 'ok' ? s : undefined))(await readiness(i)), {
            what: `${i.name} to report Redis back`,
            timeoutMs: 30_000,
          }),
        ),
      );
      await traffic.progress(150);
    } finally {
      await traffic.stop();
    }
    const errors = await Promise.all(
      instances.map((i, k) => metric(i, 'redis_errors_total').then((v) => v - errorsBefore[k])),
    );
    const f = traffic.figures;
    const found = await stored('redis');
    print('Redis stopped and started', {
      sent: f.sent,
      failed: f.failed,
      acknowledged: f.acknowledged.size,
      found: found.size,
      readinessWhileDown: degraded,
      redisErrorsByInstance: errors,
    });
    if (f.samples.length > 0) console.log(`[cluster]   failures: ${f.samples.join(' | ')}`);
    expect(f.failed).toBe(0);
    expect(errors.every((e) => e > 0)).toBe(true);
    expectStoredOnce(f, found);
  }, 120_000);

  /** A command on HAProxy's admin socket (set server … state drain|ready). */
  async function haproxySocket(command: string): Promise<void> {
    const answer = await haproxy.command(command);
    if (answer.trim() !== '') throw new Error(`HAProxy refused "${command}": ${answer}`);
  }
});
