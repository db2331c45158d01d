import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { stringify } from 'lossless-json';
import request from 'supertest';
import { parseJson } from '../src/json/json-codec.js';
import { startTestApp } from './support/app.js';
import { createTestDatabase, TestDatabase } from './support/databases.js';

const SNAPSHOT = 'test/openapi.snapshot.json';
/** The update script (package.json): UPDATE_OPENAPI_SNAPSHOT=1 and this test. */
const UPDATE = 'npm run openapi:snapshot';

type Doc = {
  openapi: string;
  info: { version: string };
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

  it('serves Swagger UI at /docs', async () => {
    const res = await request(app.getHttpServer()).get('/docs').redirects(1);
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger-ui');
  });
});
