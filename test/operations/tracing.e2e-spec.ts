import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { issueApiKeyIn } from '../support/api-keys.js';
import { RunningService, startService } from '../support/built-service.js';
import { createTestDatabase, describeIfPostgres, TestDatabase } from '../support/databases.js';
import { redisEnv } from '../support/redis-env.js';
import { waitFor } from '../support/wait-for.js';

/*
 * Traces as an operator gets them: the built service with OTEL_EXPORTER_OTLP_ENDPOINT pointing at
 * an OTLP/HTTP receiver in this test process (a node:http server taking POST /v1/traces in JSON).
 */

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
}
interface OtlpExport {
  resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

function attribute(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (value === undefined) return undefined;
  return value.stringValue ?? (value.intValue === undefined ? value.boolValue : Number(value.intValue));
}

/** An OTLP/HTTP receiver: keeps every span it is sent, and the raw bodies. */
class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  readonly bodies: string[] = [];
  readonly resources: OtlpAttribute[][] = [];
  private readonly server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !String(req.headers['content-type']).startsWith('application/json')
      ) {
        res.writeHead(404).end();
        return;
      }
      this.bodies.push(body);
      const exported = JSON.parse(body) as OtlpExport;
      for (const rs of exported.resourceSpans) {
        this.resources.push(rs.resource.attributes);
        for (const ss of rs.scopeSpans) this.spans.push(...ss.spans);
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describeIfPostgres('OpenTelemetry traces over OTLP/HTTP', () => {
  let db: TestDatabase;
  let svc: RunningService;
  let apiKey: { id: string; key: string };
  const receiver = new OtlpReceiver();
  const redis = redisEnv('tracing');

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    apiKey = await issueApiKeyIn(db);
    const endpoint = await receiver.listen();
    svc = await startService({
      ...db.env,
      ...redis.env,
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_SERVICE_NAME: 'animal-store-test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
  }, 60_000);

  afterAll(async () => {
    await svc?.stop();
    await receiver.close();
    await db?.drop();
    await redis.cleanup();
  });

  /** The access log line of the request with this X-Request-Id, parsed, once the service has written it. */
  const logLineOf = async (requestId: string): Promise<Record<string, unknown>> =>
    JSON.parse(
      await waitFor(
        () =>
          svc
            .output()
            .split('\n')
            .find((l) => l.includes(requestId)),
        { what: `the access log line of ${requestId}` },
      ),
    );

  it('exports a create as a SERVER span continuing the incoming traceparent, with query and Redis spans under it', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const res = await fetch(`${svc.url}/v1/pets`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${apiKey.key}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': randomUUID(),
        traceparent: `00-${traceId}-${callerSpanId}-01`,
      },
      body: JSON.stringify({ name: 'Traced', categoryId: 1 }),
    });
    expect({ status: res.status, body: await res.text() }).toEqual({
      status: 201,
      body: expect.stringContaining('"name":"Traced"'),
    });

    const server = await waitFor(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === 2), {
      what: 'the request span',
    });
    expect({
      name: server.name,
      parent: server.parentSpanId,
      route: attribute(server, 'http.route'),
      method: attribute(server, 'http.request.method'),
      status: attribute(server, 'http.response.status_code'),
      keyId: attribute(server, 'app.api_key.id'),
    }).toEqual({
      name: 'POST /v1/pets',
      parent: callerSpanId,
      route: '/v1/pets',
      method: 'POST',
      status: 201,
      keyId: apiKey.id,
    });
    expect(
      receiver.resources.some((r) =>
        r.some((a) => a.key === 'service.name' && a.value.stringValue === 'animal-store-test'),
      ),
    ).toBe(true);

    // The children arrive in the same or an earlier batch (they end before the request does).
    const children = receiver.spans.filter((s) => s.traceId === traceId && s.parentSpanId === server.spanId);
    const queries = children.filter((s) => attribute(s, 'db.system.name') === 'postgresql');
    // A create with a new Idempotency-Key is one statement: the key's record and the pet.
    const create = queries.filter((q) => q.name === 'WITH');
    expect(create).toHaveLength(1);
    expect(attribute(create[0], 'db.query.text')).toEqual(expect.stringContaining('INSERT INTO "pets"'));
    for (const q of queries)
      expect({ kind: q.kind, text: typeof attribute(q, 'db.query.text') }).toEqual({ kind: 3, text: 'string' });
    if (redis.prefix !== undefined) {
      // The rate limiter's round trips (one per subject it decides: the key, and before it is known the address).
      const names = children.filter((s) => attribute(s, 'db.system.name') === 'redis').map((s) => s.name);
      expect({ some: names.length > 0, names: [...new Set(names)] }).toEqual({ some: true, names: ['EVALSHA'] });
    }
    // Every span of the trace hangs off the request's; the key itself is never exported.
    expect(
      receiver.spans.filter((s) => s.traceId === traceId && s !== server && s.parentSpanId !== server.spanId),
    ).toEqual([]);
    expect(receiver.bodies.some((b) => b.includes(apiKey.key))).toBe(false);
  });

  it('exports no secret sent in the query, the path, a header or tracestate: url.path and url.query are redacted', async () => {
    const key = apiKey.key;
    const prefix = key.slice(0, key.indexOf('_') + 1);
    const encoded = [...key]
      .map((c, i) => `%${c.charCodeAt(0).toString(16)[i % 2 === 0 ? 'toUpperCase' : 'toLowerCase']()}`)
      .join('');
    const sent: { path: string; headers?: Record<string, string> }[] = [
      { path: `/v1/pets?api_key=${key}&limit=1` },
      { path: `/v1/pets?access_token=${key}` },
      { path: `/v1/pets/${key}`, headers: { Authorization: `Bearer ${key}` } },
      { path: `/v1/pets/${encoded}`, headers: { Authorization: `Bearer ${key}` } },
      { path: '/v1/pets?limit=1', headers: { 'X-Api-Key': key, tracestate: `vendor=${key}` } },
    ];
    const spans: OtlpSpan[] = [];
    for (const { path, headers = {} } of sent) {
      const traceId = randomBytes(16).toString('hex');
      const requestId = `trace-secret-${randomUUID()}`;
      const res = await fetch(`${svc.url}${path}`, {
        headers: {
          ...headers,
          'X-Request-Id': requestId,
          traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
        },
      });
      await res.text();
      spans.push(
        await waitFor(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === 2), {
          what: `the span of ${path}`,
        }),
      );
      expect(JSON.stringify(await logLineOf(requestId))).not.toContain(key.slice(prefix.length, prefix.length + 10));
    }
    expect(spans.map((s) => [attribute(s, 'url.path'), attribute(s, 'url.query')])).toEqual([
      ['/v1/pets', `api_key=${prefix}[REDACTED]&limit=1`],
      ['/v1/pets', `access_token=${prefix}[REDACTED]`],
      [`/v1/pets/${prefix}[REDACTED]`, undefined],
      [`/v1/pets/${prefix}[REDACTED]`, undefined],
      ['/v1/pets', 'limit=1'],
    ]);
    const body = key.slice(prefix.length);
    for (let i = 0; i + 10 <= body.length; i++) {
      expect(receiver.bodies.some((b) => b.includes(body.slice(i, i + 10)))).toBe(false);
      expect(svc.output().includes(body.slice(i, i + 10))).toBe(false);
    }
  });

  it("writes the trace id in the request's access log line", async () => {
    const traceId = randomBytes(16).toString('hex');
    const requestId = `trace-log-${randomUUID()}`;
    const res = await fetch(`${svc.url}/v1/pets?limit=1`, {
      headers: {
        Authorization: `Bearer ${apiKey.key}`,
        'X-Request-Id': requestId,
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(await logLineOf(requestId)).toMatchObject({ requestId, traceId, route: '/v1/pets', status: 200 });
  });

  it('starts a new trace for a request without traceparent, and logs its id', async () => {
    const requestId = `trace-new-${randomUUID()}`;
    const res = await fetch(`${svc.url}/v1/pets?limit=1`, {
      headers: { Authorization: `Bearer ${apiKey.key}`, 'X-Request-Id': requestId },
    });
    expect(res.status).toBe(200);
    await res.text();
    const { traceId } = (await logLineOf(requestId)) as { traceId: string };
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const server = await waitFor(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === 2), {
      what: 'the request span',
    });
    expect({ name: server.name, parent: server.parentSpanId ?? '' }).toEqual({ name: 'GET /v1/pets', parent: '' });
  });
});
