import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_ERROR_CODES, CONSOLE_ERROR_CODES, ERROR_CODES, ERROR_STATUS, type ErrorCode } from './api-error.js';
import { ADMIN_ERROR_RESPONSES, EDGE_ERRORS, ERROR_RESPONSES, exampleBody } from './api-responses.decorator.js';

/** Every `new ApiError('<code>'` written in the service's source, as "status code". */
function thrownInSource(dir = 'src'): Set<string> {
  const found = new Set<string>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'generated') for (const pair of thrownInSource(path)) found.add(pair);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
      for (const m of readFileSync(path, 'utf8').matchAll(/new ApiError\(\s*'(\w+)'/g))
        if (m[1] in ERROR_STATUS) found.add(`${ERROR_STATUS[m[1] as ErrorCode]} ${m[1]}`);
    }
  }
  return found;
}

describe('ERROR_RESPONSES (the error examples of the OpenAPI document)', () => {
  const documented = new Set([
    ...Object.entries(ERROR_RESPONSES).flatMap(([status, doc]) =>
      Object.keys(doc.examples).map((c) => `${status} ${c}`),
    ),
    ...Object.entries(ADMIN_ERROR_RESPONSES).flatMap(([status, doc]) =>
      Object.keys(doc.examples).map((c) => `${status} ${c}`),
    ),
    ...EDGE_ERRORS,
  ]);

  it('has an example for every status and code the source throws, and none it never throws', () => {
    const all = thrownInSource();
    // The console's own codes answer its pages, which neither OpenAPI document describes:
    // docs/admin-console.md does.
    const consoleCodes = CONSOLE_ERROR_CODES.map((c) => `${ERROR_STATUS[c]} ${c}`);
    const thrown = new Set([...all].filter((pair) => !consoleCodes.includes(pair)));
    expect(thrown.size).toBeGreaterThan(15);
    expect([...thrown].filter((pair) => !documented.has(pair)).sort()).toEqual([]);
    expect([...documented].filter((pair) => !thrown.has(pair)).sort()).toEqual([]);
    const consoleDoc = readFileSync('docs/admin-console.md', 'utf8');
    for (const code of CONSOLE_ERROR_CODES) expect(consoleDoc).toContain(code);
  });

  it('writes each example as the Error body of its status, with a code of the catalogue', () => {
    for (const [status, doc] of Object.entries(ERROR_RESPONSES)) {
      for (const code of Object.keys(doc.examples) as (typeof ERROR_CODES)[number][]) {
        const body = exampleBody(Number(status), code);
        expect(ERROR_CODES).toContain(body.code);
        expect(body.status).toBe(Number(status));
        expect(body.message.length).toBeGreaterThan(0);
      }
    }
    for (const [status, doc] of Object.entries(ADMIN_ERROR_RESPONSES)) {
      for (const code of Object.keys(doc.examples) as (typeof ERROR_CODES)[number][]) {
        const body = exampleBody(Number(status), code, ADMIN_ERROR_RESPONSES);
        expect([...ERROR_CODES, ...ADMIN_ERROR_CODES]).toContain(body.code);
        expect(body.status).toBe(Number(status));
      }
    }
  });
});
