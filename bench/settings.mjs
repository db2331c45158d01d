// The bench's settings, read once from the environment (run.mjs's header lists the variables),
// and the paths and identities every part of the bench shares.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(ROOT);
export const DIST = path.join(ROOT, '.tmp/bench-dist');
export const PEERS_DIST = path.join(ROOT, '.tmp/bench-peers');
export const WORK = path.join(ROOT, '.tmp/bench-work');
export const RESULTS = path.join(ROOT, 'bench/results');
export { SERVICE_NODE_FLAGS } from './service-flags.mjs';

export const num = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
};
export const DURATION = num('BENCH_DURATION', 8);
// 4 s: a freshly started NestJS process is still warming up its code after 2 s of listPets
// (docs/performance.md, "Warm-up"), and raw is not, which biases the first scenario against the
// framework servers.
export const WARMUP = Math.min(num('BENCH_WARMUP', 4), DURATION / 2);
// A server's first measured run follows a longer warm-up, so that a fresh process's optimizing
// compiler, which works on its worker threads in the first seconds of load and takes CPU the
// server and PostgreSQL need, has done so before the run (bench/results/README.md).
export const FIRST_WARMUP = WARMUP > 0 ? Math.max(WARMUP, num('BENCH_FIRST_WARMUP', 15)) : 0;
export const CONNECTIONS = num('BENCH_CONNECTIONS', 64);
/**
 * Each scenario runs in two phases. Capacity: every server as fast as it answers (req/s, and the
 * service's share of raw's). Then the fixed rate: every server offered the same requests a second,
 * evenly spaced in time over up to CONNECTIONS connections (bench/paced.mjs), half the service's
 * capacity in that run unless BENCH_RATE sets it. At a rate every server keeps up with, each serves the same requests, so
 * CPU per request and latency compare the servers where production runs them, not the queue of a
 * saturated machine. BENCH_CAPACITY=0 skips the first phase (then BENCH_RATE is needed),
 * BENCH_FIXED=0 the second.
 */
export const RATE = num('BENCH_RATE', 0);
export const CAPACITY = process.env.BENCH_CAPACITY !== '0';
export const FIXED = process.env.BENCH_FIXED !== '0';
/**
 * The fixed-rate phase's passes over the servers: each pass runs every server once, in the
 * order of the pass before reversed (so drift favours none).
 */
export const PASSES = Math.round(num('BENCH_PASSES', 2));
/**
 * BENCH_TOGETHER=1: in each pass of the fixed-rate phase every server runs at the same time, each
 * offered the rate, so that all of them meet the same moments of the machine (another program,
 * a slow spell of the host) and their CPU per request compares within a pass. PostgreSQL's and
 * Redis's CPU, Redis's scripts and the connections opened then belong to all of them: those
 * figures are left blank. The machine must carry every server's load at once.
 */
export const TOGETHER = process.env.BENCH_TOGETHER === '1';
if (TOGETHER && !FIXED) throw new Error('BENCH_TOGETHER=1 applies to the fixed-rate phase, which BENCH_FIXED=0 skips');
if (!CAPACITY && !RATE) throw new Error('BENCH_CAPACITY=0 needs BENCH_RATE (the fixed rate to run at)');
if (!CAPACITY && !FIXED) throw new Error('BENCH_CAPACITY=0 and BENCH_FIXED=0 leave nothing to run');
/**
 * V8's trace of every collection in each server's log, the logs kept: '1', each collection with its
 * reason and each pretenuring decision; 'nvp', each collection's figures as name=value pairs
 * (promoted and surviving bytes, survival rates, memory-reducing mode) in place of the reasons.
 */
export const TRACE_GC = ['1', 'nvp'].includes(process.env.BENCH_TRACE_GC) ? process.env.BENCH_TRACE_GC : null;
if (process.env.BENCH_TRACE_GC && !TRACE_GC && process.env.BENCH_TRACE_GC !== '0')
  throw new Error(`BENCH_TRACE_GC must be 1 or nvp, got "${process.env.BENCH_TRACE_GC}"`);
export const SCHED = process.env.BENCH_SCHED === '1';
/** The cost ledger's profiled runs sampled by Linux `perf` (CPU time, every thread) instead of V8's profiler (bench/perf-profile.mjs). */
export const PERF = process.env.BENCH_PERF === '1';
/** Where V8 writes the profiled servers' jitdump and log files with BENCH_PERF (removed at the end). */
export const PERF_DIR = path.join(WORK, 'perf');
export const PG_ADMIN_URL = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
export const FIRST_PORT = num('BENCH_PORT', 3600);
export const EMBEDDED = process.env.BENCH_EMBEDDED !== '0';
/**
 * Another build of the service (BENCH_CANDIDATE: a directory holding its compiled main.js, such as
 * another checkout's dist/), run as the server "candidate" beside this one, with the service's
 * settings and wherever the service runs: a change's before and after measured in the same run.
 */
export const CANDIDATE_DIST = process.env.BENCH_CANDIDATE ? path.resolve(process.env.BENCH_CANDIDATE) : null;
if (CANDIDATE_DIST && !existsSync(path.join(CANDIDATE_DIST, 'main.js')))
  throw new Error(`BENCH_CANDIDATE: no main.js in ${CANDIDATE_DIST} (build that checkout first)`);
/**
 * Node and V8 flags the candidate gets on its command line besides the service's
 * (BENCH_CANDIDATE_FLAGS, space-separated): a setting measured against the deployed one in the
 * same run, with the same build on both sides.
 */
export const CANDIDATE_FLAGS = (process.env.BENCH_CANDIDATE_FLAGS ?? '').split(' ').filter(Boolean);
/**
 * Environment variables the candidate gets besides the service's (BENCH_CANDIDATE_ENV,
 * space-separated NAME=value; NAME= leaves the variable out): an image setting such as
 * MALLOC_ARENA_MAX measured against the deployed one in the same run.
 */
export const CANDIDATE_ENV = Object.fromEntries(
  (process.env.BENCH_CANDIDATE_ENV ?? '')
    .split(' ')
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 1) throw new Error(`BENCH_CANDIDATE_ENV: "${pair}" is not NAME=value`);
      return [pair.slice(0, eq), pair.slice(eq + 1)];
    }),
);
export const SERVER_NAMES = ['raw', 'floor', 'peer', 'service', 'candidate'];
export const SERVERS = process.env.BENCH_SERVERS
  ? [...new Set(process.env.BENCH_SERVERS.split(',').map((s) => (s.trim() === 'baseline' ? 'raw' : s.trim())))]
  : SERVER_NAMES.filter((s) => s !== 'candidate' || CANDIDATE_DIST);
for (const s of SERVERS)
  if (!SERVER_NAMES.includes(s)) throw new Error(`BENCH_SERVERS: unknown server "${s}" (${SERVER_NAMES.join(', ')})`);
if (SERVERS.includes('candidate') && !CANDIDATE_DIST)
  throw new Error('BENCH_SERVERS: "candidate" needs BENCH_CANDIDATE (the directory of its main.js)');
// Fixed order, so the alternation is the same whatever order BENCH_SERVERS lists them in.
export const ORDER = SERVER_NAMES.filter((s) => SERVERS.includes(s));
export const SOAK = !process.env.BENCH_SOAK || process.env.BENCH_SOAK === '0' ? null : process.env.BENCH_SOAK;
export const SOAK_MINUTES = num('BENCH_SOAK_MINUTES', SOAK && SOAK !== '1' ? num('BENCH_SOAK', 10) : 10);
export const SOAK_SAMPLE_S = 10;
/** BENCH_FRESH_START=1: fresh instances' first pass over keys in use (bench/fresh-start.mjs), instead of the comparison. */
export const FRESH_START = process.env.BENCH_FRESH_START === '1';
/** How many fresh starts each build gets in that mode. */
export const FRESH_ROUNDS = num('BENCH_FRESH_ROUNDS', 3);
export const GC_PROBE = pathToFileURL(path.join(ROOT, 'bench/gc-probe.mjs')).href;
export const CPU_PROFILER = pathToFileURL(path.join(ROOT, 'bench/cpu-profiler.mjs')).href;

/**
 * The Node.js the service and the baseline run on. By default the production image's
 * runtime (Node 24 LTS, from the npm registry's `node` package, as scripts/test-node24.sh
 * does), so the figures are those of what is deployed; both servers always share it.
 */
function resolveNode(wanted) {
  if (wanted === 'current') return process.execPath;
  if (!/^\d+(\.\d+){0,2}$/.test(wanted)) {
    if (!existsSync(wanted)) throw new Error(`BENCH_NODE: no node binary at ${wanted}`);
    return wanted;
  }
  try {
    const out = execFileSync('npx', ['-y', '-p', `node@${wanted}`, 'node', '-p', 'process.execPath'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return out.trim().split('\n').pop();
  } catch (err) {
    throw new Error(
      `BENCH_NODE=${wanted}: could not get node@${wanted} from the npm registry (${err.message.split('\n')[0]}); BENCH_NODE=current uses ${process.version}`,
      { cause: err },
    );
  }
}
/**
 * What the production image sets in the service's environment besides its configuration, so the
 * bench measures what is deployed: the Dockerfile's `NODE_OPTIONS="…"` (V8's heap settings) and
 * `MALLOC_ARENA_MAX=…` (how many malloc arenas glibc keeps). BENCH_NODE_OPTIONS and
 * BENCH_MALLOC_ARENA_MAX replace them; set empty, the service runs with V8's or glibc's defaults.
 */
const DOCKERFILE = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
export const SERVICE_NODE_OPTIONS =
  process.env.BENCH_NODE_OPTIONS ?? imageEnv(/^\s*NODE_OPTIONS="([^"]*)"/m, 'NODE_OPTIONS="…"');
export const SERVICE_MALLOC_ARENA_MAX =
  process.env.BENCH_MALLOC_ARENA_MAX ?? imageEnv(/^\s*MALLOC_ARENA_MAX=(\d+)/m, 'MALLOC_ARENA_MAX=…');
/** The two as the service's environment (an empty one left out). */
export const SERVICE_IMAGE_ENV = {
  ...(SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: SERVICE_NODE_OPTIONS } : {}),
  ...(SERVICE_MALLOC_ARENA_MAX ? { MALLOC_ARENA_MAX: SERVICE_MALLOC_ARENA_MAX } : {}),
};
function imageEnv(pattern, what) {
  const match = pattern.exec(DOCKERFILE);
  if (!match) throw new Error(`bench: the Dockerfile sets no ${what} (the runtime settings the service runs with)`);
  return match[1];
}
export const NODE_BIN = resolveNode(process.env.BENCH_NODE || '24');
export const NODE_VERSION = execFileSync(NODE_BIN, ['--version'], { encoding: 'utf8' }).trim();
export const RUN_ID = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
/** The service runs as in production, where /metrics needs a token (or a port of its own). */
export const METRICS_TOKEN = `bench-${randomBytes(12).toString('hex')}`;
// Production requires it: the key tool then issues version 2 keys, as production does.
export const API_KEY_CHECKSUM_SECRET = randomBytes(32).toString('base64');

export const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);
export const distModule = (rel) => import(pathToFileURL(path.join(DIST, rel)).href);
/** BENCH_AGED=0 skips the scenarios on the aged database (bench/aged-data.mjs). */
export const AGED = process.env.BENCH_AGED !== '0';
/** The scenario the soak runs: many keys by default, the shape production's traffic has. */
export const SOAK_SCENARIO = process.env.BENCH_SOAK_SCENARIO || 'listPetsManyKeys';
// Production sets one, so the stored hashes are HMACs, as there.
export const API_KEY_PEPPER = randomBytes(32).toString('base64');
