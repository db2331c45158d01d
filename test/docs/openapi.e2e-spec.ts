import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { stringify } from 'lossless-json';
import request from 'supertest';
import { parseJson } from '../../src/json/json-codec.js';
import { startTestApp } from '../support/app.js';
import { createTestDatabase, TestDatabase } from '../support/databases.js';
import { AdminServer } from '../../src/admin/admin.server.js';
import { expectErrorBody } from '../support/error-body.js';

const SNAPSHOT = 'test/openapi.snapshot.json';
/** The update script (package.json): UPDATE_OPENAPI_SNAPSHOT=1 and this test. */
const UPDATE = 'npm run openapi:snapshot';

type Doc = {
  openapi: string;
  info: { version: string; description: string };
  servers: { url: string }[];
  paths: Record<
    string,
    Record<string, { operationId: string; deprecated?: boolean; responses: Record<string, unknown> }>
  >;
  components: { schemas: Record<string, unknown> };
};

describe('OpenAPI document', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let doc: Doc;
  let text: string;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db);
    const res = await request(app.getHttpServer()).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    // Read as a client must: losslessly, so the int64 bounds stay exact.
    doc = parseJson(res.text) as Doc;
    text = `${stringify(doc, null, 2)}\n`;
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('matches the committed snapshot (run `npm run openapi:snapshot` to accept a change)', () => {
    // Only the update script writes the expectation: a test that wrote its own would pass
    // whatever the document said.
    if (process.env.UPDATE_OPENAPI_SNAPSHOT === '1') writeFileSync(SNAPSHOT, text);
    if (!existsSync(SNAPSHOT))
      throw new Error(`${SNAPSHOT} is missing: run \`${UPDATE}\` to write it from the served document`);
    try {
      expect(text).toBe(readFileSync(SNAPSHOT, 'utf8'));
    } catch (err) {
      (err as Error).message =
        `The served OpenAPI document differs from ${SNAPSHOT}. If the change is intended, run \`${UPDATE}\` and commit the snapshot.\n\n${(err as Error).message}`;
      throw err;
    }
  });

  it('writes int64 bounds as exact JSON numbers', async () => {
    const served = (await request(app.getHttpServer()).get('/openapi.json')).text;
    const maxima = served.match(/"maximum":[^,}]+/g) ?? [];
    // NewPet.categoryId, Pet.id, Pet.categoryId and the petId parameter.
    expect(maxima.filter((m) => m === '"maximum":9223372036854775807')).toHaveLength(4);
    expect(served).not.toMatch(/"maximum":"/);
    expect(served).not.toMatch(/9223372036854776000/);
  });

  it('says what the contract requires', () => {
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers.map((s) => s.url)).toEqual(['https://api.example.test/v1', 'https://staging.example.test/v1']);
    const ops = Object.entries(doc.paths).flatMap(([p, methods]) =>
      Object.entries(methods).map(([m, op]) => [`${m.toUpperCase()} ${p}`, op] as const),
    );
    expect(Object.fromEntries(ops.map(([k, op]) => [k, op.operationId]))).toEqual({
      'GET /pets': 'listPets',
      'POST /pets': 'createPet',
      'GET /pets/{petId}': 'getPet',
      'GET /rate_limit': 'getRateLimit',
    });
    const getPet = doc.paths['/pets/{petId}'].get;
    expect(getPet.deprecated).toBe(true);
    expect((doc.components.schemas.Error as { required: string[] }).required).toEqual(
      expect.arrayContaining(['code', 'message', 'status', 'requestId']),
    );
    for (const name of ['Pet', 'NewPet', 'Pets', 'PetStatus', 'Error', 'RateLimit']) {
      expect(doc.components.schemas[name]).toBeDefined();
    }
    expect(Object.keys(getPet.responses).sort()).toEqual(
      expect.arrayContaining(['200', '400', '401', '404', '410', '429']),
    );
  });

  it('gives every error response an example per code, and declares the headers each response carries', () => {
    type Response = {
      headers?: Record<string, unknown>;
      content?: { 'application/json'?: { examples?: Record<string, { value: { code: string; status: number } }> } };
    };
    const responses = (p: string, m: string) =>
      (doc.paths[p][m] as unknown as { responses: Record<string, Response> }).responses;
    const codes = (r: Response) =>
      Object.values(r.content?.['application/json']?.examples ?? {}).map((e) => [e.value.code, e.value.status]);
    const getPet = responses('/pets/{petId}', 'get');
    expect(codes(getPet['401'])).toEqual([
      ['missing_api_key', 401],
      ['invalid_api_key', 401],
      ['api_key_expired', 401],
    ]);
    expect(codes(getPet['404'])).toEqual([['not_found', 404]]);
    expect(codes(getPet['429'])).toEqual([
      ['rate_limit_exceeded', 429],
      ['api_key_temporarily_banned', 429],
    ]);
    expect(codes(getPet['503'])).toEqual([['service_unavailable', 503]]);
    expect(codes(getPet['400'])).toEqual([
      ['invalid_parameter', 400],
      ['unknown_parameter', 400],
    ]);
    expect(codes(responses('/pets', 'get')['400'])).toEqual([
      ['invalid_parameter', 400],
      ['unknown_parameter', 400],
    ]);
    const createPet = responses('/pets', 'post');
    expect(codes(createPet['400'])).toEqual([
      ['validation_failed', 400],
      ['malformed_json', 400],
      ['invalid_parameter', 400],
      ['unknown_parameter', 400],
    ]);
    expect(codes(createPet['413'])).toEqual([['payload_too_large', 413]]);
    expect(codes(createPet['415'])).toEqual([['unsupported_media_type', 415]]);
    for (const [p, item] of Object.entries(doc.paths))
      for (const m of Object.keys(item))
        for (const [status, r] of Object.entries(responses(p, m))) {
          expect({ at: `${m} ${p} ${status}`, requestId: r.headers?.['X-Request-Id'] }).toEqual({
            at: `${m} ${p} ${status}`,
            requestId: { $ref: '#/components/headers/RequestId' },
          });
          if (Number(status) >= 400) expect(codes(r).length).toBeGreaterThan(0);
        }
    for (const r of Object.values(getPet))
      expect(Object.keys(r.headers ?? {})).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
    expect(Object.keys(createPet['201'].headers ?? {})).toEqual(
      expect.arrayContaining(['Location', 'Idempotent-Replayed']),
    );
    for (const r of [getPet['429'], getPet['503'], createPet['409']])
      expect(Object.keys(r.headers ?? {})).toContain('Retry-After');
  });

  it('says in info.description how to get a key, the plans with their limits, and where the docs are', () => {
    const description = doc.info.description;
    expect(description).toContain('npm run apikey -- create');
    expect(description).toContain('| free | 60 | 1,000 |');
    expect(description).toContain('| business | 1,000 | 100,000 |');
    expect(description).toContain('`/docs`');
    expect(description).toContain('`/openapi.json`');
  });

  it.each(['/', '/v1'])('points GET %s to the documentation, with no key and no rate limit', async (path) => {
    const res = await request(app.getHttpServer()).get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      name: 'Animal Store API',
      version: '1.0.0',
      docs: '/docs',
      openapi: '/openapi.json',
      api: '/v1',
    });
    expect(res.headers.link).toBe('</docs>; rel="service-doc", </openapi.json>; rel="service-desc"');
    expect(res.headers['x-request-id']).toBeDefined();
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    const head = await request(app.getHttpServer()).head(path);
    expect(head.status).toBe(200);
    expect(head.headers.link).toBe(res.headers.link);
  });

  it('lets Try-it-out on /docs call the origin the page was opened at, whatever its host name', async () => {
    for (const host of ['localhost:3000', '127.0.0.1:3000', 'docs.internal.example:8080']) {
      const page = await request(app.getHttpServer()).get('/docs/').set('Host', host);
      expect(page.status).toBe(200);
      const csp = page.headers['content-security-policy'] as string;
      const connect = csp.split(';').find((d) => d.startsWith('connect-src '));
      // 'self' is the origin the page was served from; the documented servers' origins may be
      // tried as well; nothing else (no *, no scheme-wide source).
      expect(connect).toBe("connect-src 'self' https://api.example.test https://staging.example.test");
    }
    // The UI's copy of the document offers the relative server first, then the documented ones.
    const init = await request(app.getHttpServer()).get('/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    const servers = /"servers":\s*(\[[^\]]*\])/.exec(init.text)?.[1];
    expect(JSON.parse(servers ?? 'null')).toEqual([
      { url: '/v1', description: 'This server (the origin this page was opened at)' },
      { url: 'https://api.example.test/v1', description: 'Production' },
      { url: 'https://staging.example.test/v1', description: 'Staging' },
    ]);
    // The served document keeps exactly the two documented servers.
    expect(doc.servers.map((s) => s.url)).toEqual(['https://api.example.test/v1', 'https://staging.example.test/v1']);
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await request(app.getHttpServer()).get('/docs').redirects(1);
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger-ui');
  });

  it('serves the files the /docs page links, and nothing else of swagger-ui-dist', async () => {
    const page = await request(app.getHttpServer()).get('/docs/').redirects(1);
    const linked = [
      ...page.text.matchAll(/(?:src|href)="\.\/docs\/([^"]+)"|(?:src|href)="\.?\/?([^"/:]+\.(?:js|css|png))"/g),
    ].map((m) => m[1] ?? m[2]);
    expect(linked.length).toBeGreaterThanOrEqual(4);
    for (const file of linked) expect((await request(app.getHttpServer()).get(`/docs/${file}`)).status).toBe(200);
    for (const file of [
      'package.json',
      'swagger-ui.js.map',
      'swagger-ui-es-bundle.js',
      'index.html',
      'README.md',
      'absolute-path.js',
    ]) {
      const res = await request(app.getHttpServer()).get(`/docs/${file}`);
      expectErrorBody(res, 404, 'route_not_found');
    }
  });
});

const ADMIN_SNAPSHOT = 'test/admin-openapi.snapshot.json';

describe('the admin API’s OpenAPI document', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let text: string;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { env: { ADMIN_PORT: '0' } });
    const res = await request(`http://127.0.0.1:${app.get(AdminServer).port()}`).get('/admin/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    text = `${stringify(parseJson(res.text), null, 2)}\n`;
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it(`matches the committed snapshot (run \`npm run openapi:snapshot\` to accept a change)`, () => {
    if (process.env.UPDATE_OPENAPI_SNAPSHOT === '1') writeFileSync(ADMIN_SNAPSHOT, text);
    if (!existsSync(ADMIN_SNAPSHOT))
      throw new Error(`${ADMIN_SNAPSHOT} is missing: run \`${UPDATE}\` to write it from the served document`);
    expect(text).toBe(readFileSync(ADMIN_SNAPSHOT, 'utf8'));
  });

  it('lists the admin error codes and the admin token scheme, and none of the public API’s operations', () => {
    const doc = JSON.parse(text) as {
      paths: Record<string, unknown>;
      components: { schemas: { Error: { properties: { code: { enum: string[] } } } }; securitySchemes: object };
    };
    expect(doc.components.schemas.Error.properties.code.enum).toEqual(
      expect.arrayContaining(['missing_admin_token', 'invalid_admin_token']),
    );
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['adminToken']);
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/admin/v1/'))).toBe(true);
  });
});
