// bench/sched-probe.mjs, BENCH_SCHED's reader of /proc/<pid>/schedstat: what it sums for a window
// (the server apart, the others by name, the readings inside the window only), and the probe
// itself watching a real process whose main thread and worker thread spin.
import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cpuAround, parseSamples, startSchedProbe } from '../../bench/sched-probe.mjs';
import { waitFor } from '../support/wait-for.js';

const SERVER = 100;
const BENCH = 200;
const PROBE = 300;

/** The probe's file for readings at the given times, each giving every pid of `d` that µs. */
function probeText(
  names: Record<number, string>,
  readings: { t: number; d: Record<number | string, [number, number]> }[],
): string {
  const lines = [JSON.stringify({ t: 0, d: {}, names })];
  for (const r of readings) lines.push(JSON.stringify(r));
  return `${lines.join('\n')}\n{"t":`; // the last line cut short, as when the probe is stopped mid-write
}

describe('cpuAround', () => {
  const names = {
    [SERVER]: 'MainThread',
    [BENCH]: 'node',
    [PROBE]: 'node',
    7: 'postgres',
    8: 'postgres',
    9: 'erlexec',
  };

  it('reports the server apart, the bench and the probe by role, and sums the others by name', () => {
    const text = probeText(names, [
      { t: 1_000, d: { [SERVER]: [5_000, 1_000], 7: [2_000, 0], 9: [9_000, 0] } },
      {
        t: 1_020,
        d: { [SERVER]: [4_000, 12_000], 8: [3_000, 0], [BENCH]: [6_000, 0], [PROBE]: [1_000, 0], threads: [2_500, 0] },
      },
    ]);
    expect(cpuAround(parseSamples(text), 990, 1_020, SERVER, BENCH, PROBE)).toEqual({
      serverRunMs: 9,
      serverWaitMs: 13,
      serverThreadsMs: 2.5,
      others: [
        { name: 'erlexec', ms: 9 },
        { name: 'bench (load generator)', ms: 6 },
        { name: 'postgres', ms: 5 },
        { name: 'sched probe', ms: 1 },
      ],
    });
  });

  it('counts the readings after the window opens and up to its end, and only those', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ t: fc.integer({ min: 1, max: 1_000 }), us: fc.integer({ min: 1, max: 50_000 }) }), {
          maxLength: 40,
        }),
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 0, max: 1_000 }),
        (readings, a, b) => {
          const [from, to] = a <= b ? [a, b] : [b, a];
          const text = probeText(
            names,
            readings.map(({ t, us }) => ({ t, d: { 9: [us, 0] } })),
          );
          const inside = readings.filter(({ t }) => t > from && t <= to).reduce((sum, r) => sum + r.us, 0);
          const seen = cpuAround(parseSamples(text), from, to, SERVER, BENCH, PROBE);
          expect(seen.others).toEqual(inside > 0 ? [{ name: 'erlexec', ms: Math.round(inside / 100) / 10 }] : []);
          expect(seen.serverRunMs).toBe(0);
        },
      ),
    );
  });
});

describe('startSchedProbe', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'bench-sched-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("sees the CPU a process's main thread and its other threads burn", async () => {
    // Once started it says so; once told to, it spins for 400 ms on its main thread and on a
    // worker thread, then prints the CPU time it has had since (all threads) and waits to be
    // stopped. The probe starts after Node's own start-up, which the process does not count.
    const busy = spawn(process.execPath, [
      '-e',
      `const { Worker } = require('node:worker_threads');
       const spin = 'const end = performance.now() + 400; while (performance.now() < end);';
       process.stdin.once('data', () => {
         const since = process.cpuUsage();
         const worker = new Worker(spin, { eval: true });
         eval(spin);
         worker.once('exit', () => {
           const used = process.cpuUsage(since);
           process.stdout.write(String((used.user + used.system) / 1000));
         });
       });
       process.stdout.write('ready ');`,
    ]);
    let printed = '';
    busy.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const exited = new Promise((resolve) => busy.once('exit', resolve));
    await waitFor(() => printed.startsWith('ready '), { what: 'the busy process to start' });
    printed = '';
    const file = path.join(dir, 'sched.jsonl');
    const probe = await startSchedProbe(file, busy.pid);
    busy.stdin.write('go\n');
    await waitFor(() => printed !== '', { what: 'the busy process to report its CPU time' });
    // Two more readings after the spinning: the last one then holds all of it.
    const readings = readFileSync(file, 'utf8').split('\n').length;
    await waitFor(() => readFileSync(file, 'utf8').split('\n').length >= readings + 2, {
      what: 'two more readings of the probe',
    });
    busy.kill();
    await exited;
    const samples = await probe.stop();
    const seen = cpuAround(samples, 0, Date.now(), busy.pid!, process.pid, probe.pid);
    const usedMs = Number(printed);
    // Both threads ran, and together what the process says it had (on a busy machine other
    // processes take some of the 400 ms, so the amounts are compared, not fixed).
    expect(usedMs).toBeGreaterThan(100);
    expect(seen.serverRunMs).toBeGreaterThanOrEqual(50);
    expect(seen.serverThreadsMs).toBeGreaterThanOrEqual(50);
    expect(seen.serverRunMs + seen.serverThreadsMs).toBeGreaterThanOrEqual(usedMs * 0.9);
    expect(seen.serverRunMs + seen.serverThreadsMs).toBeLessThanOrEqual(usedMs * 1.1 + 20);
    expect(samples.names.get(busy.pid!)).toMatch(/node|MainThread/);
  });
});
