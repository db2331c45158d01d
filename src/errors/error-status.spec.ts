import { readFileSync } from 'node:fs';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from './api-error.js';

/** The rows `| <status> | \`<code>\` | … |` of the error table in docs/api.md. */
function documentedRows(): [number, string][] {
  const text = readFileSync('docs/api.md', 'utf8');
  return [...text.matchAll(/^\| (\d{3}) \| `(\w+)` \|/gm)].map((m) => [Number(m[1]), m[2]]);
}

describe('ERROR_STATUS (each code with its one status)', () => {
  it('gives every code a status from 400 to 599', () => {
    for (const status of Object.values(ERROR_STATUS)) {
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    }
  });

  it("is the table of docs/api.md's Errors: every public code once, with the same status", () => {
    const rows = documentedRows();
    expect(rows.map(([status, code]) => `${status} ${code}`).sort()).toEqual(
      ERROR_CODES.map((code) => `${ERROR_STATUS[code as ErrorCode]} ${code}`).sort(),
    );
  });
});
