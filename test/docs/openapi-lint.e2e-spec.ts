import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { startTestApp } from '../support/app.js';
import { createTestDatabase, TestDatabase } from '../support/databases.js';

const run = promisify(execFile);
const BIN = path.resolve('node_modules/.bin');
import { AdminServer } from '../../src/admin/admin.server.js';

/** The documents linted: the public API's on PORT, and the admin API's on its own listener. */
const DOCUMENTS: {
  name: string;
  env: Record<string, string>;
  fetch: (app: NestExpressApplication) => request.Test;
}[] = [
  {
    name: 'public',
    env: {},
    fetch: (app: NestExpressApplication) => request(app.getHttpServer()).get('/openapi.json'),
  },
  {
    name: 'admin',
    env: { ADMIN_PORT: '0' },
    fetch: (app: NestExpressApplication) =>
      request(`http://127.0.0.1:${app.get(AdminServer).port()}`).get('/admin/openapi.json'),
  },
];

/** Runs a linter's CLI; a non-zero exit is a finding, not a crash, so its output is returned. */
async function lint(bin: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // No telemetry or update checks from Redocly: CI has no internet, and none is needed.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  try {
    const { stdout, stderr } = await run(path.join(BIN, bin), args, { env, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err; // could not start it at all
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/**
 * The document the running service serves at /openapi.json, linted by two tools nobody here
 * wrote, as a client author would: Redocly CLI with its recommended rules (redocly.yaml) and
 * Spectral with spectral:oas (.spectral.yaml). Any error or warning from either fails CI.
 * `npm run openapi:lint` runs just this.
 */
describe.each(DOCUMENTS)('the served OpenAPI document ($name) lints clean', ({ name, env, fetch }) => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  const SERVED = path.resolve(`.tmp/openapi.${name}.served.json`);
  const SPECTRAL_RESULTS = path.resolve(`.tmp/spectral.${name}.json`);

  // Long: the first suite of a clean checkout also builds the migrated database template (.tmp).
  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { env });
    const res = await fetch(app);
    expect(res.status).toBe(200);
    mkdirSync(path.dirname(SERVED), { recursive: true });
    rmSync(SPECTRAL_RESULTS, { force: true });
    writeFileSync(SERVED, res.text);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('with Redocly CLI (recommended): 0 errors, 0 warnings', async () => {
    const out = await lint('redocly', ['lint', '--config', 'redocly.yaml', '--format', 'json', SERVED]);
    const report = JSON.parse(out.stdout) as {
      totals: { errors: number; warnings: number; ignored: number };
      problems: { ruleId: string; message: string }[];
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
    expect(out.code).toBe(0);
  }, 60_000);

  it('with Spectral (spectral:oas): no problem of any severity', async () => {
    // Spectral follows its JSON on stdout with a sentence when there is nothing to report: the
    // JSON goes to a file instead.
    const out = await lint('spectral', [
      'lint',
      '--ruleset',
      '.spectral.yaml',
      '--format',
      'json',
      '--output',
      SPECTRAL_RESULTS,
      '--fail-severity',
      'hint',
      SERVED,
    ]);
    const problems = (
      JSON.parse(readFileSync(SPECTRAL_RESULTS, 'utf8')) as { code: string; message: string; path: string[] }[]
    ).map((p) => `${p.code}: ${p.message} at ${p.path.join('.')}`);
    expect(problems).toEqual([]);
    expect(out.code).toBe(0);
  }, 60_000);
});
