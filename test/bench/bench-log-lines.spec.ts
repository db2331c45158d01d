// bench/log-lines.mjs, the count of the service's log lines written during a bench run: only
// the bytes after the run's starting offset are read, in chunks, whatever their size.
import fc from 'fast-check';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { linesSince, logOffset } from '../../bench/log-lines.mjs';

/** Lines of a log, each without its newline. */
const logLines = fc.array(
  fc.string({ maxLength: 40 }).map((s) => s.replace(/\n/g, '')),
  { maxLength: 50 },
);

describe('linesSince and logOffset', () => {
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'bench-log-lines-'));
    file = path.join(dir, 'service.log');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts the lines appended after the offset, none of those before it', () => {
    fc.assert(
      fc.property(logLines, logLines, (before, during) => {
        writeFileSync(file, before.map((l) => `${l}\n`).join(''));
        const offset = logOffset(file);
        appendFileSync(file, during.map((l) => `${l}\n`).join(''));
        expect(linesSince(file, offset)).toBe(during.length);
      }),
    );
  });

  it('counts across the chunks of a log of several MiB, lines cut by the end of a chunk counted once', () => {
    // 3 MiB and a bit of lines of 100 bytes: the chunk boundaries (every 1 MiB) fall mid-line.
    const line = `${'x'.repeat(99)}\n`;
    writeFileSync(file, 'a line written before the run\n');
    const offset = logOffset(file);
    const lines = Math.ceil((3 * 1024 * 1024) / line.length) + 7;
    appendFileSync(file, line.repeat(lines));
    appendFileSync(file, 'a line still being written');
    expect(linesSince(file, offset)).toBe(lines);
    expect(linesSince(file, 0)).toBe(lines + 1);
  });

  it('reads a missing log as empty', () => {
    expect(logOffset(path.join(dir, 'none.log'))).toBe(0);
    expect(linesSince(path.join(dir, 'none.log'), 0)).toBe(0);
  });
});
