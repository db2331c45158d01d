import type { NestExpressApplication } from '@nestjs/platform-express';
import net from 'node:net';
import request from 'supertest';
import { generateApiKey } from '../src/auth/api-key-format.js';
import { FakeClock, issueApiKey, startTestApp } from './support/app.js';
import { issueApiKeyIn } from './support/api-keys.js';
import { RunningService, startService } from './support/built-service.js';
import { createTestDatabase, TestDatabase } from './support/databases.js';
import { parseResponse } from './support/raw-http.js';

/**
 * Node checks its headers and request timeouts this often (CONNECTIONS_CHECK_INTERVAL_MS, its
 * connectionsCheckingInterval; 30 s by default, which would make this test wait up to 30 s).
 */
const NODE_TIMEOUT_CHECK_MS = 500;
const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;

interface Trickle {
  /** ms from the first byte to the server closing the connection. */
  cutAfterMs: number;
  bytesSent: number;
  answer: Buffer;
}

/**
 * Opens a connection, sends `head` at once, then one more byte of `drip` every `everyMs`
 * until the server closes the connection (or `giveUpMs`).
 */
function trickle(port: number, head: string, drip: string, everyMs: number, giveUpMs: number): Promise<Trickle> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
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
      resolve({ cutAfterMs: Date.now() - started, bytesSent: sent, answer: Buffer.concat(chunks) });
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
    // Node checks the timeouts every NODE_TIMEOUT_CHECK_MS: a slow client is cut between its
    // timeout and that much later, never after.
    const bound = REQUEST_TIMEOUT_MS + NODE_TIMEOUT_CHECK_MS + 5000;
    const headers = trickle(svc.port, 'GET /v1/pets HTTP/1.1\r\nHost: slow\r\n', 'X-Slow: 1\r\n', 200, bound);
    const body = trickle(
      svc.port,
      'POST /v1/pets HTTP/1.1\r\nHost: slow\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${key}\r\nContent-Length: 4000\r\n\r\n`,
      '{"name":"slow","categoryId":1}                                        ',
      200,
      bound,
    );
    const silent = trickle(svc.port, '', '', 60_000, bound);

    // Meanwhile the server keeps answering everyone else promptly.
    let served = 0;
    const others = (async () => {
      for (let i = 0; i < 10; i++) {
        const t0 = Date.now();
        const res = await fetch(`${svc.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
        expect(res.status).toBe(200);
        expect(Date.now() - t0).toBeLessThan(1000);
        served++;
        await new Promise((r) => setTimeout(r, 500));
      }
    })();

    const [h, b, s] = await Promise.all([headers, body, silent]);
    await others;
    expect(served).toBe(10);

    for (const [what, t, timeout] of [
      ['headers', h, HEADERS_TIMEOUT_MS],
      ['body', b, REQUEST_TIMEOUT_MS],
      ['silent', s, HEADERS_TIMEOUT_MS],
    ] as const) {
      expect({ what, late: t.cutAfterMs > bound }).toEqual({ what, late: false });
      expect({ what, early: t.cutAfterMs < timeout }).toEqual({ what, early: false });
    }
    // The trickled headers and body were answered 408 in the Error body before the cut.
    for (const t of [h, b]) {
      const res = parseResponse(t.answer);
      expect(res.status).toBe(408);
      expect(res.headers.connection).toBe('close');
      expect(JSON.parse(res.body.toString('utf8'))).toEqual({ code: 'validation_failed', message: expect.any(String), status: 408 });
    }
    // Nothing half-received was stored.
    const list = await fetch(`${svc.url}/v1/pets?limit=100`, { headers: { authorization: `Bearer ${key}` } });
    expect(await list.json()).toEqual([]);
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
  }, 120_000);
});

describe('unauthenticated key guessing is rate limited per address', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  const clock = new FakeClock(new Date('2026-11-22T12:00:05Z'));

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { clock });
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('refuses a burst of invalid keys from one address with 429, then bans it; a valid key is unaffected', async () => {
    const http = () => request(app.getHttpServer());
    const valid = await issueApiKey(app, { plan: 'free' });
    const statuses: string[] = [];
    for (let i = 0; i < 100; i++) {
      // Well-formed keys with a valid checksum (each one is looked up), and a spoofed
      // X-Forwarded-For per request, which without TRUST_PROXY must not count as another client.
      const res = await http()
        .get('/v1/pets')
        .set('Authorization', `Bearer ${generateApiKey()}`)
        .set('X-Forwarded-For', `198.51.100.${i}`);
      statuses.push(`${res.status} ${res.body.code}`);
      expect(res.body.status).toBe(res.status);
      expect(res.headers['x-ratelimit-limit']).toBe('60');
      if (res.status === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // The free plan's 60 a minute answer 401; then 20 refusals with 429; the one more than 20
    // starts a 15-minute ban.
    expect(statuses.slice(0, 60)).toEqual(Array(60).fill('401 invalid_api_key'));
    expect(statuses.slice(60, 80)).toEqual(Array(20).fill('429 rate_limit_exceeded'));
    expect(statuses.slice(80)).toEqual(Array(20).fill('429 api_key_temporarily_banned'));
    const banned = await http().get('/v1/pets').set('Authorization', `Bearer ${generateApiKey()}`);
    expect(Number(banned.headers['retry-after'])).toBeGreaterThan(14 * 60);

    // The next minute does not lift the ban; the end of it does.
    clock.set('2026-11-22T12:01:05Z');
    expect((await http().get('/v1/pets').set('Authorization', `Bearer ${generateApiKey()}`)).body.code).toBe('api_key_temporarily_banned');
    // A valid key from the same address has its own counters.
    expect((await http().get('/v1/pets').set('Authorization', `Bearer ${valid}`)).status).toBe(200);
    clock.set('2026-11-22T12:16:10Z');
    expect((await http().get('/v1/pets').set('Authorization', `Bearer ${generateApiKey()}`)).status).toBe(401);
  });
});
