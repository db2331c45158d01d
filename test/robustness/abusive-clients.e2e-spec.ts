import type { NestExpressApplication } from '@nestjs/platform-express';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { generateApiKey } from '../../src/api-keys/api-key-format.js';
import { FakeClock, startTestApp } from '../support/app.js';
import { issueApiKeyIn } from '../support/api-keys.js';
import { freePort, RunningService, startService } from '../support/built-service.js';
import { createTestDatabase, describeIfPostgres, preferredDatabaseKind, TestDatabase } from '../support/databases.js';
import { settledStats } from '../support/pg-stats.js';
import { expectErrorBody } from '../support/error-body.js';
import { parseResponse } from '../support/raw-http.js';
import { redisEnv } from '../support/redis-env.js';
import { flood } from '../support/flood.js';

/** The database the attack tests run against: PostgreSQL when DATABASE_URL is set (CI), else the embedded one. */
const ATTACK_DB = preferredDatabaseKind();

/**
 * Node checks its headers and request timeouts this often (CONNECTIONS_CHECK_INTERVAL_MS, its
 * connectionsCheckingInterval; 30 s by default, which would make this test wait up to 30 s).
 */
const NODE_TIMEOUT_CHECK_MS = 500;
const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;

interface Trickle {
  bytesSent: number;
  answer: Buffer;
}

/**
 * Opens a connection, sends `head` at once, then one more byte of `drip` every `everyMs`
 * until the server closes the connection (or `giveUpMs`, a guard against a hang).
 */
function trickle(port: number, head: string, drip: string, everyMs: number, giveUpMs: number): Promise<Trickle> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      clearInterval(timer);
      socket.destroy();
      reject(new Error(`still connected after ${giveUpMs} ms (${sent} bytes sent)`));
    }, giveUpMs);
    socket.on('connect', () => {
      socket.write(head);
      sent += head.length;
      let i = 0;
      timer = setInterval(() => {
        if (!socket.writable) return;
        socket.write(drip[i++ % drip.length]);
        sent++;
      }, everyMs);
    });
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ bytesSent: sent, answer: Buffer.concat(chunks) });
    });
  });
}

describe('slow clients are cut off by the server timeouts (built service)', () => {
  let db: TestDatabase;
  let svc: RunningService;
  let key: string;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    key = (await issueApiKeyIn(db)).key;
    svc = await startService(
      {
        ...db.env,
        LOG_LEVEL: 'warn',
        HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        CONNECTIONS_CHECK_INTERVAL_MS: String(NODE_TIMEOUT_CHECK_MS),
      },
      60_000,
    );
  }, 120_000);

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    await db?.drop();
  });

  it('cuts a client trickling its headers, one trickling its body and one sending nothing, while serving others', async () => {
    // When they are cut is Node's business, set from the configuration (see the next test);
    // here, that they are, and how. The give-up time only guards against a hang.
    const giveUp = 60_000;
    let slowConnected = 3;
    const connected = <T>(p: Promise<T>) => p.finally(() => (slowConnected -= 1));
    const headers = connected(
      trickle(svc.port, 'GET /v1/pets HTTP/1.1\r\nHost: slow\r\n', 'X-Slow: 1\r\n', 200, giveUp),
    );
    const body = connected(
      trickle(
        svc.port,
        'POST /v1/pets HTTP/1.1\r\nHost: slow\r\nContent-Type: application/json\r\n' +
          `Authorization: Bearer ${key}\r\nContent-Length: 4000\r\n\r\n`,
        '{"name":"slow","categoryId":1}                                        ',
        200,
        giveUp,
      ),
    );
    const silent = connected(trickle(svc.port, '', '', 60_000, giveUp));

    // Meanwhile the server keeps answering everyone else: requests made while all three slow
    // clients hold their connections are answered, one after the other, until they are cut.
    let servedWhileHeld = 0;
    const others = (async () => {
      while (slowConnected > 0) {
        const held = slowConnected === 3;
        const res = await fetch(`${svc.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
        expect(res.status).toBe(200);
        if (held && slowConnected === 3) servedWhileHeld++;
      }
    })();

    const [h, b] = await Promise.all([headers, body, silent]);
    await others;
    expect(servedWhileHeld).toBeGreaterThan(0);
    // The trickled headers and body were answered 408 in the Error body before the cut.
    for (const t of [h, b]) {
      const res = parseResponse(t.answer);
      expect(expectErrorBody(res, 408, 'request_timeout').details).toBeUndefined();
      expect(res.headers.connection).toBe('close');
    }
    // Nothing half-received was stored.
    const list = await fetch(`${svc.url}/v1/pets?limit=100`, { headers: { authorization: `Bearer ${key}` } });
    expect(await list.json()).toEqual([]);
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  }, 120_000);

  it('gives the HTTP server the configured headers and request timeouts, checked at the configured interval', async () => {
    // The same settings in an app of this process: the server the built service listens with
    // is made by the same configureApp (src/app.factory.ts).
    const own = await createTestDatabase('embedded');
    const app = await startTestApp(own, {
      env: {
        HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        CONNECTIONS_CHECK_INTERVAL_MS: String(NODE_TIMEOUT_CHECK_MS),
      },
    });
    try {
      const server = app.getHttpServer() as http.Server & { connectionsCheckingInterval: number };
      expect({
        headersTimeout: server.headersTimeout,
        requestTimeout: server.requestTimeout,
        connectionsCheckingInterval: server.connectionsCheckingInterval,
      }).toEqual({
        headersTimeout: HEADERS_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        connectionsCheckingInterval: NODE_TIMEOUT_CHECK_MS,
      });
    } finally {
      await app.close();
      await own.drop();
    }
  }, 120_000);
});

/** A GET through `agent`, its status and JSON body. */
function get(url: string, agent: http.Agent): Promise<{ status: number; body: { status?: string; code?: string } }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** X-Forwarded-For values that are no address: each would have been a client of its own. */
function garbageForwardedFor(i: number): string {
  const kinds = [
    () => `not-an-address-${i}`,
    () => `${randomBytes(12).toString('base64')}`,
    () => `999.${i}.1.1`,
    () => `1.2.3.${i}.5`,
    () => `203.0.113.${i % 250}:${1000 + i}`, // host:port, as some balancers write it: not an address either
    () => `::g${i}`,
    () => `unknown${'x'.repeat(2000 + i)}`, // kilobytes of attacker text
    () => `[2001:db8::${i.toString(16)}]`,
    () => `${i}`,
    () => `<script>${i}</script>`,
  ];
  return kinds[i % kinds.length]();
}

describe(`a forged X-Forwarded-For through TRUST_PROXY=1 is not a new client (${process.env.REDIS_URL ? 'Redis' : 'memory'})`, () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let base: string;
  const redis = redisEnv('forwarded-for');

  beforeAll(async () => {
    db = await createTestDatabase(ATTACK_DB);
    app = await startTestApp(db, {
      clock: new FakeClock(new Date('2026-11-22T12:00:05Z')),
      env: { ...redis.env, TRUST_PROXY: '1' },
    });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  });

  afterAll(async () => {
    await app?.close();
    await redis.cleanup();
    await db?.drop();
  });

  it('counts 70 requests with 70 different garbage values against the socket address: the 61st is a 429', async () => {
    const results = await flood(`${base}/v1/pets`, 70, 1, (i) => ({
      headers: { 'x-forwarded-for': garbageForwardedFor(i) },
    }));
    const outcomes = results.map((r) => `${r.status} ${r.body.code}`);
    expect(outcomes.slice(0, 60)).toEqual(Array(60).fill('401 missing_api_key'));
    expect(outcomes.slice(60)).toEqual(Array(10).fill('429 rate_limit_exceeded'));
    expect(results[60].headers.get('x-ratelimit-remaining')).toBe('0');
    // A real address from the trusted hop is still a client of its own.
    const real = await fetch(`${base}/v1/pets`, { headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(real.status).toBe(401);
    expect(real.headers.get('x-ratelimit-remaining')).toBe('59');
    if (process.env.REDIS_URL) {
      // No attacker text in Redis key names: every key is short.
      const admin = new Redis(process.env.REDIS_URL);
      try {
        const keys = await admin.keys(`${redis.env.RATE_LIMIT_PREFIX}*`);
        expect(keys.length).toBeGreaterThan(0);
        expect(keys.filter((k) => k.length > redis.env.RATE_LIMIT_PREFIX.length + 100)).toEqual([]);
      } finally {
        admin.disconnect();
      }
    }
  });
});

describeIfPostgres(
  'a flood of readiness probes costs a handful of database round trips (built service, PostgreSQL)',
  () => {
    let db: TestDatabase;
    let svc: RunningService | undefined;
    const redis = redisEnv('readiness-flood');

    beforeAll(async () => {
      db = await createTestDatabase('postgres');
    }, 60_000);

    afterAll(async () => {
      await svc?.stop('SIGKILL');
      await redis.cleanup();
      await db?.drop();
    });

    it('answers 2,000 concurrent probes 200 within the readiness timeout, from a few computations', async () => {
      const before = await settledStats(db.env.DATABASE_URL);
      // Each computation reused for READINESS_CACHE_MS, here longer than the flood can take: the
      // count below then depends on the mechanism (one computation at a time, reused), not on how
      // fast this machine is.
      svc = await startService(
        { ...db.env, ...redis.env, READINESS_TIMEOUT_MS: '2000', READINESS_CACHE_MS: '60000' },
        60_000,
      );
      // All 2,000 at once, over at most 400 connections (more than Node's listen backlog of 511
      // at once would be dropped by the kernel before the service sees them).
      const agent = new http.Agent({ keepAlive: true, maxSockets: 400 });
      const probes = await Promise.all(Array.from({ length: 2000 }, () => get(`${svc!.url}/readyz`, agent))).finally(
        () => agent.destroy(),
      );
      expect(await svc.stop('SIGTERM')).toBe(0);
      svc = undefined;
      const after = await settledStats(db.env.DATABASE_URL);
      // The service's whole life: its start, every probe, its shutdown (less the one query of the
      // first settledStats' own connection to the database), apart from the polls of changed API
      // keys: one query (one scan of api_keys) per API_KEY_CACHE_TTL_MS / 2 whatever the load, so
      // their number follows how long this machine takes to start and stop the service.
      const polls = (after.scans.api_keys ?? 0) - (before.scans.api_keys ?? 0);
      const roundTrips = after.xactCommit + after.xactRollback - (before.xactCommit + before.xactRollback) - 1 - polls;
      const computations = after.scans._prisma_migrations - (before.scans._prisma_migrations ?? 0);
      process.stdout.write(
        `readiness flood: ${roundTrips} database round trips besides ${polls} polls of changed keys, ${computations} readiness computations for 2000 probes\n`,
      );
      // Every probe was answered from a computation that finished within READINESS_TIMEOUT_MS
      // (the server gives up on a check after it, and the answer is then a 503).
      const outcomes = probes.map((p) => `${p.status} ${p.body.status ?? p.body.code}`);
      expect(outcomes).toEqual(Array(2000).fill('200 ok'));
      // One computation at a time, reused for READINESS_CACHE_MS: one for the whole flood, and one
      // to spare.
      const allowed = 2;
      expect(computations).toBeLessThanOrEqual(allowed);
      // Three queries per computation (SELECT 1, the migrations table's existence and rows), and
      // what the service's start does.
      expect(roundTrips).toBeLessThanOrEqual(3 * allowed + 5);
    }, 120_000);
  },
);

describe('connection strings are never echoed with their password (built service)', () => {
  const PASSWORD = 'Pw-never-echoed-s3cr3t';
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
  }, 60_000);

  afterAll(async () => {
    await db?.drop();
  });

  it.each([
    // (More shapes of bad URL are in src/config/config.spec.ts; each start here costs seconds.)
    ['DATABASE_URL', `postgresql://animal:${PASSWORD}@127.0.0.1:notaport/animal_store`],
    ['REDIS_URL', `redis://default:${PASSWORD}@127.0.0.1:99999`],
  ])(
    'stops on a bad %s (%s) with exit 78 and a message naming it, without the password',
    async (name, value) => {
      const svc = await startService({ ...db.env, LOG_LEVEL: 'info', [name]: value });
      expect(await svc.exited).toBe(78);
      expect(svc.output()).toContain(`configuration error: ${name}`);
      expect(svc.output()).not.toContain(PASSWORD);
    },
    60_000,
  );

  it('logs nothing of the password when the servers of well-formed URLs cannot be reached', async () => {
    const svc = await startService({
      ...db.env,
      LOG_LEVEL: 'debug',
      DATABASE_URL: `postgresql://animal:${PASSWORD}@127.0.0.1:1/animal_store`,
      REDIS_URL: `redis://default:${PASSWORD}@127.0.0.1:1`,
      DB_CONNECT_TIMEOUT_MS: '300',
      REDIS_CONNECT_TIMEOUT_MS: '200',
    });
    try {
      expect((await fetch(`${svc.url}/readyz`)).status).toBe(503);
      expect(
        (await fetch(`${svc.url}/v1/pets`, { headers: { authorization: `Bearer ${generateApiKey()}` } })).status,
      ).toBe(503);
    } finally {
      await svc.stop();
    }
    expect(svc.output()).toMatch(/not ready/);
    expect(svc.output()).not.toContain(PASSWORD);
  }, 60_000);
});

describe('production refuses open metrics and trust-everything proxies (built service)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
  }, 60_000);

  afterAll(async () => {
    await db?.drop();
  });

  const SECRET = { API_KEY_CHECKSUM_SECRET: 'production-checksum-secret-0123456789abcdef' };
  const TOKEN = { METRICS_TOKEN: 'metrics-token-0123456789' };

  it.each([
    ['no METRICS_TOKEN nor METRICS_PORT', SECRET, /METRICS_TOKEN or METRICS_PORT is required with NODE_ENV=production/],
    ['TRUST_PROXY=true', { ...SECRET, ...TOKEN, TRUST_PROXY: 'true' }, /TRUST_PROXY=true .*number of proxies/],
    [
      'no API_KEY_CHECKSUM_SECRET',
      TOKEN,
      /API_KEY_CHECKSUM_SECRET is required with NODE_ENV=production.*openssl rand -base64 48/,
    ],
    [
      "docker-compose.yml's placeholder pepper",
      { ...SECRET, ...TOKEN, API_KEY_PEPPER: 'REPLACE-ME-placeholder-pepper-not-a-secret-0000' },
      /API_KEY_PEPPER is the placeholder of docker-compose.yml.*openssl rand -base64 48/,
    ],
    [
      "docker-compose.yml's placeholder checksum secret",
      { ...TOKEN, API_KEY_CHECKSUM_SECRET: 'REPLACE-ME-placeholder-checksum-secret-00' },
      /API_KEY_CHECKSUM_SECRET is the placeholder of docker-compose.yml/,
    ],
  ])(
    'stops with exit 78 on %s',
    async (_what, env: Record<string, string>, message) => {
      const svc = await startService({ ...db.env, NODE_ENV: 'production', LOG_LEVEL: 'info', ...env });
      expect(await svc.exited).toBe(78);
      expect(svc.output()).toMatch(message);
    },
    60_000,
  );

  it('serves /metrics only on METRICS_PORT when it is set, on loopback unless METRICS_HOST says otherwise, and logs at most 1 KiB of a URL', async () => {
    const metricsPort = await freePort();
    const svc = await startService({
      ...db.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      SHUTDOWN_DELAY_MS: '0',
      METRICS_PORT: String(metricsPort),
      ...SECRET,
    });
    try {
      const onApi = await fetch(`${svc.url}/metrics`);
      expect(onApi.status).toBe(404);
      expect(await onApi.json()).toEqual({
        code: 'route_not_found',
        message: expect.any(String),
        status: 404,
        requestId: onApi.headers.get('x-request-id'),
      });
      // On loopback only (METRICS_HOST unset): another address of this host gets no answer.
      await expect(fetch(`http://127.0.0.2:${metricsPort}/metrics`)).rejects.toThrow();
      const internal = `http://127.0.0.1:${metricsPort}`;
      const metrics = await fetch(`${internal}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await metrics.text()).toContain('http_request_duration_seconds');
      const other = await fetch(`${internal}/v1/pets`);
      expect(other.status).toBe(404);
      expect(await other.json()).toEqual({
        code: 'route_not_found',
        message: expect.any(String),
        status: 404,
        requestId: other.headers.get('x-request-id'),
      });
      const post = await fetch(`${internal}/metrics`, { method: 'POST', body: 'x' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
      // An unauthenticated request's URL is client text up to the header limit, and every one is
      // logged, refused or not: the access log keeps at most 1,024 characters of it.
      const longUrl = await fetch(`${svc.url}/v1/pets?${'q'.repeat(12_000)}`, {
        headers: { 'x-request-id': 'long-url' },
      });
      expect(longUrl.status).toBe(401);
    } finally {
      expect(await svc.stop()).toBe(0);
    }
    const line = svc
      .output()
      .split('\n')
      .find((l) => l.includes('"requestId":"long-url"'));
    expect(line).toBeDefined();
    expect(line!.length).toBeLessThan(2048);
    expect(line).toContain('…[12009 chars]');
  }, 60_000);
});
