import { execFile } from 'node:child_process';
import path from 'node:path';

const CLIENT_DIR = path.resolve('clients/typescript');

/**
 * The client's public API is recorded in etc/animal-store-client.api.md (API Extractor's report).
 * scripts/api-report.mjs compiles the declarations and compares them with it; this fails on any
 * difference, with the script's message saying how to accept a deliberate change.
 */
describe('the client public API report (etc/animal-store-client.api.md)', () => {
  it('matches the exported API of src/index.ts', async () => {
    const result = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        process.execPath,
        ['scripts/api-report.mjs'],
        { cwd: CLIENT_DIR, timeout: 240_000 },
        (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, output: stdout + stderr }),
      );
    });
    expect({ code: result.code, output: result.output }).toEqual({
      code: 0,
      output: expect.stringContaining('The public API matches etc/animal-store-client.api.md.') as unknown,
    });
  }, 240_000);
});
