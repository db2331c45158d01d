// bench/processes.mjs's reading of a process's CPU time from /proc, in its own code and in the
// kernel apart (the fixed-rate table's "of it kernel" column), against a real process that spends
// a known amount of each.
import { spawn } from 'node:child_process';
import { cpuMsOf, cpuSplitOf } from '../../bench/processes.mjs';
import { waitFor } from '../support/wait-for.js';

/**
 * A child that reads /dev/urandom (the kernel generates the bytes: system time) until it has
 * spent 300 ms in the kernel, then spins in JavaScript (user time) until it has spent 600 ms
 * there, then says so and waits to be stopped.
 */
const BURNER = `
const fs = require('node:fs');
const fd = fs.openSync('/dev/urandom', 'r');
const buf = Buffer.alloc(1 << 16);
while (process.cpuUsage().system < 300_000) for (let i = 0; i < 50; i++) fs.readSync(fd, buf);
let x = 0;
while (process.cpuUsage().user < 600_000) for (let i = 0; i < 1e7; i++) x += i % 7;
process.stdout.write('burnt ' + x + '\\n');
setInterval(() => {}, 1000);
`;

describe('cpuSplitOf', () => {
  it("splits a process's CPU time into its own and the kernel's, and cpuMsOf is their sum", async () => {
    const child = spawn(process.execPath, ['-e', BURNER], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      await waitFor(() => out.includes('burnt'), { timeoutMs: 60_000, what: 'the child to burn its CPU time' });
      const split = cpuSplitOf(child.pid as number);
      expect(split).not.toBeNull();
      const { userMs, systemMs } = split as { userMs: number; systemMs: number };
      // Burnt to at least 300 ms in the kernel and 600 in its own code; /proc counts in ticks of 10 ms.
      expect(systemMs).toBeGreaterThanOrEqual(290);
      expect(userMs).toBeGreaterThanOrEqual(590);
      expect(systemMs).toBeLessThan(userMs);
      // The child idles now: a second reading gives the same sum.
      expect(cpuMsOf(child.pid as number)).toBeGreaterThanOrEqual(userMs + systemMs);
      expect(cpuMsOf(child.pid as number)).toBeLessThan(userMs + systemMs + 50);
    } finally {
      child.kill();
    }
  });

  it('is null for a process that is gone', () => {
    expect(cpuSplitOf(2 ** 22 + 1)).toBeNull();
    expect(cpuMsOf(2 ** 22 + 1)).toBeNull();
  });
});
