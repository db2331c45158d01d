// BENCH_PERF=1: the cost ledger's profiled runs sampled by Linux `perf` instead of V8's profiler.
// V8's profiler samples by the clock, so a stack holds whatever time its thread spent off the CPU
// meanwhile (the socket writes read high); `perf` samples by CPU time (its cpu-clock event), every
// thread of the server, kernel and native code included. Each server is started with V8's
// jitdump flags (perfNodeFlags), so `perf inject --jit` names every compiled JavaScript
// function, even after V8 has moved its code. The samples are then turned into a V8 CPU profile
// (perfToProfile), which bench/ledger.mjs and bench/profile-summary.mjs read as they read V8's,
// and which Chrome's DevTools opens:
//
// - a sample of the main thread keeps its JavaScript frames, each with the native frames it
//   called (V8's builtins and runtime, libc, the kernel), so a sample inside a builtin goes to the
//   nearest JavaScript function's layer, and the builtin shows in the top functions by self time;
// - a sample with V8's collector on its stack is `(garbage collector)`;
// - a sample with no JavaScript frame (libuv's polling, reads before any callback) is
//   `(program)`, with its native leaf under it;
// - a sample of another thread (V8's collector and compiler threads, libuv's pool) is
//   `(other threads)`, with the thread's name under it.
//
// Usage: node bench/perf-profile.mjs <perf.data> [out.cpuprofile] [jitdump dir]: the profile of a
// recording made with PERF_RECORD_ARGS of a process started with perfNodeFlags (given the jitdump's
// directory, the jitted-*.so files `perf inject` writes there are removed after).
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../test/support/local-servers.mjs';

/**
 * Node's flags for a process to be profiled: a jitdump file of its compiled code, interpreted frames
 * on the native stack, and the files V8 writes for them in `dir` (its log always; the jitdump
 * where V8 has --perf-prof-path, Node 22 and later, else in the working directory).
 */
export function perfNodeFlags(dir, nodeBin = process.execPath) {
  const flags = [
    '--perf-prof',
    '--interpreted-frames-native-stack',
    `--logfile=${path.join(dir, 'v8-%p.log')}`,
    '--no-logfile-per-isolate',
  ];
  return perfProfPathSupported(nodeBin) ? [...flags, `--perf-prof-path=${dir}`] : flags;
}

const pathSupport = new Map();

/** Whether this Node's V8 writes its jitdump where --perf-prof-path says; asked once per binary. */
export function perfProfPathSupported(nodeBin) {
  let supported = pathSupport.get(nodeBin);
  if (supported === undefined) {
    supported = spawnSync(nodeBin, ['--v8-options'], { encoding: 'utf8' }).stdout.includes('--perf-prof-path');
    pathSupport.set(nodeBin, supported);
  }
  return supported;
}

/** How often `perf` samples each thread, per second of its CPU time. */
export const PERF_HZ = 999;
/** `perf record`'s arguments besides the pid and output: the monotonic clock `perf inject --jit` needs, call graphs. */
export const PERF_RECORD_ARGS = ['record', '-q', '-k', '1', '-e', 'cpu-clock', '-F', String(PERF_HZ), '-g'];

/** Why `perf` cannot profile here, or null when it can. */
export function perfUnavailable() {
  const r = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return 'the perf command is missing (Debian: apt-get install linux-perf)';
  return null;
}

/**
 * Starts `perf record` on a process; resolves once its events are enabled, which is after it has
 * written its file and read the process's mappings. perf starts with its events off (`-D -1`) and
 * turns them on when told on its control descriptor, answering "ack" on the other, so nothing the
 * process does after this resolves is missed. stop() ends it (SIGINT) and waits for it.
 */
export async function startPerf(pid, file) {
  rmSync(file, { force: true });
  const child = spawn('perf', [...PERF_RECORD_ARGS, '-D', '-1', '--control', 'fd:3,4', '-p', String(pid), '-o', file], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  let acked = '';
  child.stdio[4].on('data', (d) => (acked += d));
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? signal)));
  child.stdio[3].write('enable\n');
  await waitFor(() => child.exitCode !== null || acked.startsWith('ack'), {
    what: `perf record of pid ${pid} to start`,
  });
  if (child.exitCode !== null) throw new Error(`perf record exited ${child.exitCode}: ${stderr.trim()}`);
  return {
    pid: child.pid,
    async stop() {
      child.kill('SIGINT');
      const code = await exited;
      if (code !== 0 && code !== 'SIGINT') throw new Error(`perf record exited ${code}: ${stderr.trim()}`);
    },
  };
}

/**
 * The CPU profile of a recording: `perf inject --jit` beside it, `perf script` read line by line.
 * The jitted-<pid>-<n>.so files inject writes next to the jitdump are removed after, given its
 * directory (`jitDir`).
 */
export async function perfProfile(file, jitDir) {
  const injected = `${file}.jit`;
  const inject = spawnSync('perf', ['inject', '--jit', '-i', file, '-o', injected], { encoding: 'utf8' });
  if (inject.status !== 0) throw new Error(`perf inject failed: ${inject.stderr}`);
  try {
    const script = spawn('perf', ['script', '-i', injected, '-F', 'comm,pid,tid,period,ip,sym,dso'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const builder = new ProfileBuilder();
    for await (const line of createInterface({ input: script.stdout, crlfDelay: Infinity })) builder.line(line);
    return builder.profile();
  } finally {
    rmSync(injected, { force: true });
    if (jitDir)
      for (const f of readdirSync(jitDir))
        if (/^jitted-\d+-\d+\.so$/.test(f)) rmSync(path.join(jitDir, f), { force: true });
  }
}

/** The profile of `perf script -F comm,pid,tid,period,ip,sym,dso` output (perfProfile). */
export function perfToProfile(text) {
  const builder = new ProfileBuilder();
  for (const line of text.split('\n')) builder.line(line);
  return builder.profile();
}

// A sample's first line: `<comm> <pid>/<tid> <period>` (the command name may hold spaces);
// each frame after it: `<hex ip> <symbol> (<dso>)`; a blank line ends the sample.
const HEADER = /(\d+)\/(\d+)\s+(\d+)\s*$/;
const FRAME = /^\s+[0-9a-f]+ (.*) \((.*)\)$/;
// A compiled JavaScript function as V8's jitdump names it: `JS:<tier mark><name> <url>:<line>:<column>`
// (the mark names the compiler's tier, and is dropped).
const JS_FRAME = /^JS:[*~^+]?'?(.*?) ?((?:file:|node:|wasm:|\/)\S*?)(?::(\d+))?(?::(\d+))?$/;
// V8's collector, on the main thread's stack when it collects there.
const GC_FRAME = /Heap::(CollectGarbage|PerformGarbageCollection)|Scavenger|MarkCompactCollector|MinorMarkSweep/;

class ProfileBuilder {
  constructor() {
    this.nodes = [{ id: 1, callFrame: frame('(root)'), children: [] }];
    this.childIds = [new Map()];
    this.samples = [];
    this.timeDeltas = [0];
    this.sample = null;
  }

  line(line) {
    if (line.trim() === '') {
      this.end();
      return;
    }
    const f = FRAME.exec(line);
    if (f !== null && this.sample !== null) {
      this.sample.frames.push({ sym: f[1], dso: f[2] });
      return;
    }
    const h = HEADER.exec(line);
    if (h !== null) {
      this.end();
      this.sample = { comm: line.slice(0, h.index).trim(), pid: h[1], tid: h[2], period: Number(h[3]), frames: [] };
    }
  }

  /** Adds the sample read so far: its stack, root first, as the nodes of a V8 profile. */
  end() {
    const s = this.sample;
    this.sample = null;
    if (s === null) return;
    let stack;
    if (s.pid !== s.tid) stack = [frame('(other threads)'), frame(s.comm || `thread ${s.tid}`)];
    else if (s.frames.some((x) => GC_FRAME.test(x.sym))) stack = [frame('(garbage collector)')];
    else {
      // Leaf first: every frame up to the outermost JavaScript one, native frames above it dropped.
      const frames = s.frames.map(callFrameOf);
      let outer = -1;
      for (let i = frames.length - 1; i >= 0 && outer < 0; i--) if (frames[i].url !== '') outer = i;
      stack =
        outer < 0
          ? [frame('(program)'), ...(frames.length > 0 ? [frames[0]] : [])]
          : frames.slice(0, outer + 1).reverse();
    }
    let id = 1;
    for (const cf of stack) id = this.child(id, cf);
    this.samples.push(id);
    // The sample's CPU time (cpu-clock's period, ns) in µs, as the delta before the next sample:
    // bench/ledger.mjs charges sample i with timeDeltas[i + 1].
    this.timeDeltas.push(s.period / 1000);
  }

  child(parentId, cf) {
    const key = `${cf.functionName}\u0000${cf.url}\u0000${cf.lineNumber}\u0000${cf.columnNumber}`;
    const children = this.childIds[parentId - 1];
    let id = children.get(key);
    if (id === undefined) {
      id = this.nodes.length + 1;
      this.nodes.push({ id, callFrame: cf, children: [] });
      this.childIds.push(new Map());
      children.set(key, id);
      this.nodes[parentId - 1].children.push(id);
    }
    return id;
  }

  profile() {
    this.end();
    // One delta more than samples: each sample's own time follows it, where bench/ledger.mjs reads it.
    const micros = this.timeDeltas.reduce((a, b) => a + b, 0);
    return {
      nodes: this.nodes,
      startTime: 0,
      endTime: Math.round(micros),
      samples: this.samples,
      timeDeltas: this.timeDeltas,
    };
  }
}

function frame(functionName, url = '', lineNumber = -1, columnNumber = -1) {
  return { functionName, scriptId: '0', url, lineNumber, columnNumber };
}

/** A perf frame as a V8 call frame: a JavaScript function with its script, else the symbol and where it lives. */
function callFrameOf({ sym, dso }) {
  const js = JS_FRAME.exec(sym);
  if (js !== null) {
    const url = js[2].startsWith('/') ? `file://${js[2]}` : js[2];
    return frame(js[1], url, js[3] ? Number(js[3]) - 1 : -1, js[4] ? Number(js[4]) - 1 : -1);
  }
  const where = dso.includes('kernel')
    ? ' [kernel]'
    : /jitted-|perf-\d+\.map/.test(dso)
      ? ''
      : ` [${path.basename(dso)}]`;
  return frame(`${sym === '[unknown]' ? '(unknown)' : sym}${where}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, out, jitDir] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/perf-profile.mjs <perf.data> [out.cpuprofile] [jitdump dir]');
    process.exit(2);
  }
  perfProfile(file, jitDir ?? null).then((profile) =>
    writeFileSync(out ?? file.replace(/(\.data)?$/, '.cpuprofile'), JSON.stringify(profile)),
  );
}
