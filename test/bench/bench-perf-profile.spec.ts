// bench/perf-profile.mjs, BENCH_PERF's reader of Linux `perf` samples: the V8 CPU profile it
// makes of `perf script`'s text, as the cost ledger attributes it, and a real recording of a
// Node process started with the flags the bench gives a profiled server.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ledger } from '../../bench/ledger.mjs';
import { formatNearest } from '../../bench/profile-summary.mjs';
import { perfNodeFlags, perfProfile, perfToProfile, perfUnavailable, startPerf } from '../../bench/perf-profile.mjs';
import { waitFor } from '../support/wait-for.js';

const SERVICE = 'file:///srv/.tmp/bench-dist';
const LRU = '/srv/node_modules/lru-cache/dist/esm/index.js';

/** `perf script -F comm,pid,tid,period,ip,sym,dso` text: one sample per entry, frames leaf first. */
function script(samples: { tid: number; ns: number; frames: [string, string][] }[]): string {
  return samples
    .map(
      ({ tid, ns, frames }) =>
        `${tid === 10 ? 'node' : 'V8 Worker'} 10/${tid} ${ns}\n` +
        frames.map(([sym, dso], i) => `\t    ${(0x1000 + i).toString(16)} ${sym} (${dso})`).join('\n') +
        '\n',
    )
    .join('\n');
}

const layerUs = (text: string) =>
  Object.fromEntries(
    ledger(perfToProfile(text))
      .layers.filter((l) => l.ms > 0)
      .map((l) => [l.layer, Math.round(l.ms * 1000)]),
  );

describe('perfToProfile', () => {
  const jit = '/srv/.tmp/bench-work/perf/jitted-10-7.so';

  it("charges a sample to its nearest JavaScript function's layer, through builtins, native code and the kernel", () => {
    const text = script([
      {
        tid: 10,
        ns: 1_001_000,
        frames: [
          ['tcp_sendmsg', '[kernel.kallsyms]'],
          ['__libc_write', '/usr/lib/x86_64-linux-gnu/libc.so.6'],
          ['Builtin:CallApiCallback', jit],
          [`JS:*writeUtf8String node:internal/stream_base_commons:120:3`, jit],
          [`JS:*'send ${SERVICE}/rate-limit/redis.store.js:80:5`, jit],
          ['uv_run', '/usr/bin/node'],
        ],
      },
      {
        tid: 10,
        ns: 2_002_000,
        frames: [
          ['Builtin:FindOrderedHashMapEntry', jit],
          [`JS:+peek ${LRU}:1443:9`, jit],
          [`JS:^get credential ${SERVICE}/auth/auth.service.js:150:3`, jit],
        ],
      },
    ]);
    expect(layerUs(text)).toEqual({
      'Redis (ioredis, redis store)': 1_001,
      'guard: auth (guard, auth service, keys)': 2_002,
    });
    // A name with a space (a getter), the tier mark dropped, the line and column 0-based as V8's.
    const profile = perfToProfile(text);
    expect(profile.nodes.map((n) => n.callFrame)).toContainEqual({
      functionName: 'get credential',
      scriptId: '0',
      url: `${SERVICE}/auth/auth.service.js`,
      lineNumber: 149,
      columnNumber: 2,
    });
    expect(profile.nodes.map((n) => n.callFrame.functionName)).toEqual(expect.arrayContaining(['send', 'peek']));
    expect(profile.nodes.map((n) => n.callFrame.functionName)).toContain('Builtin:FindOrderedHashMapEntry');
    expect(profile.nodes.map((n) => n.callFrame.functionName)).toContain('tcp_sendmsg [kernel]');
    expect(profile.nodes.map((n) => n.callFrame.functionName)).not.toContain('uv_run [node]');
    expect(profile.samples).toHaveLength(2);
    expect(profile.timeDeltas).toEqual([0, 1_001, 2_002]);
  });

  it('puts the collector, the other threads and stacks without JavaScript on lines of their own', () => {
    const text = script([
      {
        tid: 10,
        ns: 1_000_000,
        frames: [
          ['v8::internal::Scavenger::ScavengePage', '/usr/bin/node'],
          ['v8::internal::Heap::CollectGarbage', '/usr/bin/node'],
          [`JS:*list ${SERVICE}/pets/pets.controller.js:60:3`, jit],
        ],
      },
      { tid: 11, ns: 3_000_000, frames: [['v8::internal::Compiler::Compile', '/usr/bin/node']] },
      {
        tid: 10,
        ns: 5_000_000,
        frames: [
          ['ep_poll', '[kernel.kallsyms]'],
          ['epoll_wait', '/usr/lib/x86_64-linux-gnu/libc.so.6'],
          ['uv__io_poll', '/usr/bin/node'],
        ],
      },
    ]);
    expect(layerUs(text)).toEqual({
      GC: 1_000,
      "other threads (V8's collector and compiler, libuv's pool)": 3_000,
      'V8 & native, no JS stack ((program))': 5_000,
    });
    const names = perfToProfile(text).nodes.map((n) => n.callFrame.functionName);
    expect(names).toEqual(expect.arrayContaining(['V8 Worker', 'ep_poll [kernel]']));
  });
});

describe('formatNearest', () => {
  it('ranks functions in µs a request, each sample at its nearest JavaScript frame, two builds side by side', () => {
    const build = (dir: string, ms: number) =>
      perfToProfile(
        script([
          {
            tid: 10,
            ns: ms * 1_000_000,
            frames: [
              ['Builtin:FindOrderedHashMapEntry', 'jitted-10-1.so'],
              [`JS:*get credential file:///srv/.tmp/${dir}/auth/auth.service.js:150:3`, 'jitted-10-2.so'],
            ],
          },
          { tid: 10, ns: 1_000_000, frames: [['ep_poll', '[kernel.kallsyms]']] },
        ]),
      );
    // Service: 3 of 4 ms in the function; candidate: 1 of 2 ms.
    expect(
      formatNearest([
        { name: 'service', profile: build('bench-dist', 3), cpuUsPerReq: 100 },
        { name: 'candidate', profile: build('cand-dist', 1), cpuUsPerReq: 80 },
      ]).split('\n'),
    ).toEqual([
      '| function (nearest JavaScript frame) | service µs/req | candidate µs/req |',
      '|---|--:|--:|',
      '| get credential auth/auth.service.js:150 | 75.0 | 40.0 |',
      '| (program) | 25.0 | 40.0 |',
    ]);
  });
});

const perfMissing = perfUnavailable();

describe('a recording of a real process', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(path.join(tmpdir(), 'bench-perf-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // Without `perf` (a machine without linux-perf) there is nothing to record; BENCH_PERF says so too.
  (perfMissing === null ? it : it.skip)('names the JavaScript function that spent the CPU', async () => {
    // Once told to, the process spins in one named function for 300 ms of CPU, then says so and waits.
    const program = path.join(dir, 'spin.js');
    writeFileSync(
      program,
      `function spinForPerfTest(ms) {
         const start = process.cpuUsage();
         let x = 0;
         while (true) {
           for (let i = 0; i < 1e5; i++) x = (x * 31 + i) | 0;
           const used = process.cpuUsage(start);
           if (used.user + used.system > ms * 1000) return x;
         }
       }
       process.stdin.once('data', () => process.stdout.write(String(spinForPerfTest(300))));
       process.stdout.write('ready\\n');`,
    );
    const child = spawn(process.execPath, [...perfNodeFlags(dir), program], { cwd: dir });
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitFor(() => printed.startsWith('ready'), { what: 'the process to start' });
      const file = path.join(dir, 'run.perf.data');
      const perf = await startPerf(child.pid!, file);
      child.stdin.write('go\n');
      await waitFor(() => printed.length > 'ready\n'.length, { what: 'the process to finish spinning' });
      await perf.stop();
      const profile = await perfProfile(file, dir);

      const spin = profile.nodes.filter((n) => n.callFrame.functionName === 'spinForPerfTest');
      expect(spin.length).toBeGreaterThan(0);
      expect(spin[0].callFrame.url).toBe(`file://${program}`);
      // Most of the main thread's CPU time of the recording was spent in it (or what it called).
      const under = new Set<number>();
      const add = (id: number) => {
        under.add(id);
        for (const c of profile.nodes[id - 1].children) add(c);
      };
      spin.forEach((n) => add(n.id));
      const us = (pick: (id: number) => boolean) =>
        profile.samples.reduce((sum, id, i) => sum + (pick(id) ? profile.timeDeltas[i + 1] : 0), 0);
      expect(us((id) => under.has(id))).toBeGreaterThan(150_000);
      expect(us((id) => under.has(id))).toBeGreaterThan(0.6 * us(() => true));
      // The files perf inject wrote beside the jitdump are gone; the jitdump stays with its process.
      expect(readdirSync(dir).filter((f) => f.startsWith('jitted-'))).toEqual([]);
      expect(
        readdirSync(dir)
          .filter((f) => /^(jit-\d+\.dump|v8-\d+\.log)$/.test(f))
          .sort(),
      ).toEqual([`jit-${child.pid}.dump`, `v8-${child.pid}.log`]);
    } finally {
      child.kill();
      await exited;
    }
  });
});
