import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { startTestApp } from '../../../test/support/app.js';
import { createTestDatabase, TestDatabase } from '../../../test/support/databases.js';

const COMMITTED = path.resolve('clients/typescript/src/generated/schema.ts');
const GENERATOR = path.resolve('clients/typescript/scripts/generate.mjs');

/**
 * The client's types are generated from the document the running service serves, never written
 * by hand. This fails when the committed ones drift from it; `npm run client:generate`
 * (UPDATE_CLIENT_TYPES=1) rewrites them.
 */
describe('generated client types', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;

  // Long: the first suite of a clean checkout also builds the migrated database template (.tmp).
  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('match the served OpenAPI document (run `npm run client:generate` to accept a change)', async () => {
    const res = await request(app.getHttpServer()).get('/openapi.json');
    expect(res.status).toBe(200);
    mkdirSync(path.resolve('.tmp'), { recursive: true });
    const served = path.resolve('.tmp/client-openapi.json');
    const generated = path.resolve('.tmp/client-schema.ts');
    writeFileSync(served, res.text);
    await promisify(execFile)(process.execPath, [GENERATOR, served, generated]);
    const text = readFileSync(generated, 'utf8');
    if (process.env.UPDATE_CLIENT_TYPES === '1' || !existsSync(COMMITTED)) {
      if (process.env.CI === 'true') throw new Error(`${COMMITTED} is missing`);
      writeFileSync(COMMITTED, text);
    }
    expect(readFileSync(COMMITTED, 'utf8')).toBe(text);
    expect(text).toMatch(/id: bigint;/);
  }, 60_000);
});
