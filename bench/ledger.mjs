// The cost ledger: where each CPU microsecond of a request goes, by layer, from a V8
// CPU profile (`BENCH_PROFILE=1 npm run bench` writes them for listPets; it prints this ledger for
// the service, the candidate, the framework floor and the peer side by side; with BENCH_PERF=1 the
// profiles are made from Linux perf's samples, bench/perf-profile.mjs).
//
// Every sample is given to one layer: walk its stack from the leaf up to the nearest frame that
// belongs to a layer (RULES, first matching rule wins per frame). So a writev under ioredis is
// Redis, under the HTTP response is response writing, under pg is the database; a JSON.stringify
// under the JSON writer is the JSON writer. A sample whose stack has no layer at all is "socket I/O,
// no owner on the stack" when its leaf is in Node's socket or stream code, else "other".
// µs per request of a layer = its share of busy (non-idle) samples × the run's measured CPU
// µs/request (user + system time of the process from /proc, all its threads, ÷ requests), so the
// lines add up to the measured figure; the profile itself sees the main thread only.
// The profile samples by the clock: the time a stack holds includes any its thread spent off the
// CPU meanwhile, which falls mostly on the socket writes (`writev`, `writeUtf8String`). So the
// lines holding them (response writing, database, Redis) read high and the others low; the
// fixed-rate table's "of it kernel" column gives what the kernel spent.
//
// Usage: node bench/ledger.mjs <a.cpuprofile> [µs/req] [<b.cpuprofile> [µs/req]] …
//        (several profiles print side by side, with the difference of each to the first)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// What a frame is: the URL's part inside node_modules (a package path), a service or peer
// file (its path under the build dir), a node: core module, or a V8 pseudo-frame.
const pkg = (names) => new RegExp(`/node_modules/(${names.join('|')})/`);
const own = (pattern) =>
  new RegExp(`^(?!.*/node_modules/)(?=.*(/\\.tmp/bench-dist/|/dist/|/src/|/bench/)).*(${pattern})`);

/**
 * The layers, in the order the ledger prints them, each with the frames that belong to it. Edit
 * here when the service's files move. `url` is tested against the frame's script URL, `fn` (when
 * given) against its function name as well; rules are tried in this order for each frame.
 */
export const RULES = [
  { layer: 'GC', fn: /^\(garbage collector\)$/ },
  // Only in a profile made from `perf` samples (bench/perf-profile.mjs): the server's other threads.
  { layer: "other threads (V8's collector and compiler, libuv's pool)", fn: /^\(other threads\)$/ },
  { layer: 'V8 & native, no JS stack ((program))', fn: /^\(program\)$/ },
  { layer: 'HTTP parsing & socket read', url: /^node:(_http_server|_http_common|_http_incoming)$/ },
  { layer: 'HTTP parsing & socket read', url: own('/http/client-errors') },
  // The response: Node's outgoing message, Express's res.* helpers, Nest's adapter reply.
  { layer: 'response writing', url: /^node:_http_outgoing$/ },
  { layer: 'response writing', url: /\/node_modules\/express\/lib\/response\.js$/ },
  {
    layer: 'response writing',
    url: pkg(['@nestjs/platform-express']),
    fn: /^(reply|status|end|setHeader|getHeader|isHeadersSent|appendHeader|redirect|render)$/,
  },
  {
    layer: 'Express & its router',
    url: pkg([
      'express',
      'router',
      'path-to-regexp',
      'finalhandler',
      'qs',
      'body-parser',
      'parseurl',
      'send',
      'serve-static',
      'on-finished',
    ]),
  },
  // Global middlewares, each its own line.
  { layer: 'middleware: request id', url: own('/http/request-id') },
  { layer: 'middleware: security headers', url: own('/http/http-edge|/edge') },
  { layer: 'middleware: security headers', url: pkg(['helmet']) },
  { layer: 'middleware: CORS', url: pkg(['cors']) },
  { layer: 'middleware: request logging (nestjs-pino, pino-http)', url: pkg(['nestjs-pino', 'pino-http']) },
  { layer: 'metrics (middleware, prom-client)', url: own('/metrics/') },
  { layer: 'metrics (middleware, prom-client)', url: pkg(['prom-client', 'tdigest', 'bintrees']) },
  { layer: 'route template (for metrics and logs)', url: own('route-template|route-table|/library-internals/') },
  // Guards.
  { layer: 'Redis (ioredis, redis store)', url: own('/rate-limit/(redis\\.store|redis-leases|rate-limit\\.script)') },
  { layer: 'guard: rate limit', url: own('rate-limit') },
  { layer: 'guard: auth (guard, auth service, keys)', url: own('/auth/|/api-keys/') },
  // Interceptors, by file.
  { layer: 'interceptor: json-body', url: own('json-body\\.interceptor') },
  { layer: 'interceptor: json-response', url: own('json-response\\.interceptor') },
  { layer: 'interceptor: idempotency', url: own('/idempotency/') },
  { layer: 'interceptors (other)', url: own('interceptor') },
  {
    layer: 'validation pipe (+ class-validator, class-transformer)',
    url: own('validation\\.pipe|/http/validators|parse-pet-id\\.pipe|/dto/'),
  },
  { layer: 'validation pipe (+ class-validator, class-transformer)', url: /\/node_modules\/@nestjs\/common\/pipes\// },
  {
    layer: 'validation pipe (+ class-validator, class-transformer)',
    url: pkg(['class-validator', 'class-transformer', 'validator', 'libphonenumber-js']),
  },
  { layer: 'exception filter', url: own('all-exceptions') },
  { layer: 'JSON writer (json-codec, lossless-json)', url: own('json-codec') },
  { layer: 'JSON writer (json-codec, lossless-json)', url: pkg(['lossless-json']) },
  { layer: 'handler (pets controller/service)', url: own('/pets/|/bench/peers/') },
  { layer: 'database (pg, Prisma, PGlite)', url: own('/database/|/prisma/|/generated/prisma/') },
  {
    layer: 'database (pg, Prisma, PGlite)',
    url: pkg([
      'pg',
      'pg-protocol',
      'pg-pool',
      'pg-types',
      'pg-connection-string',
      'postgres-array',
      'postgres-bytea',
      'postgres-date',
      'postgres-interval',
      '@prisma',
      '@electric-sql',
      'pglite-prisma-adapter',
    ]),
  },
  { layer: 'database (pg, Prisma, PGlite)', url: /^wasm:\/\// }, // Prisma's query compiler, PGlite
  {
    layer: 'Redis (ioredis, redis store)',
    url: pkg([
      'ioredis',
      '@ioredis',
      'redis-parser',
      'redis-errors',
      'standard-as-callback',
      'cluster-key-slot',
      'denque',
    ]),
  },
  { layer: 'logging (pino, sonic-boom, redaction, logging module)', url: own('/logging/') },
  {
    layer: 'logging (pino, sonic-boom, redaction, logging module)',
    url: pkg([
      'pino',
      'sonic-boom',
      '@pinojs',
      'fast-redact',
      'thread-stream',
      'quick-format-unescaped',
      'on-exit-leak-free',
      'atomic-sleep',
      'pino-std-serializers',
      'safe-stable-stringify',
      'fast-safe-stringify',
    ]),
  },
  { layer: 'request tracking (health, shutdown drain)', url: own('/health/') },
  {
    layer: 'Nest routing & execution context (+ rxjs)',
    url: pkg(['@nestjs/core', '@nestjs/common', '@nestjs/platform-express', 'rxjs', 'reflect-metadata', 'tslib']),
  },
  { layer: 'service code (other files)', url: own('\\.js$') },
  // Only reached when nothing nearer on the stack has a layer: these are the roots of async work.
  {
    layer: 'event loop (microtasks, nextTick, timers)',
    url: /^node:(internal\/process\/task_queues|internal\/timers|timers|internal\/priority_queue)$/,
  },
];
const SOCKET = 'socket I/O, no owner on the stack';
const OTHER = 'other';
export const LAYERS = [...new Set(RULES.map((r) => r.layer)), SOCKET, OTHER];

function layerOf(callFrame) {
  for (const r of RULES) {
    if (r.url && !r.url.test(callFrame.url)) continue;
    if (r.fn && !r.fn.test(callFrame.functionName)) continue;
    return r.layer;
  }
  return null;
}

/** Attribution of every sample of a profile to a layer: ms and share of busy time per layer. */
export function ledger(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map(); // node id → layer, a stack's answer is the same for every sample on it
  const attribute = (leafId) => {
    if (memo.has(leafId)) return memo.get(leafId);
    let found = null;
    for (let id = leafId; id !== undefined && found === null; id = parent.get(id))
      found = layerOf(byId.get(id).callFrame);
    if (found === null) {
      const url = byId.get(leafId).callFrame.url;
      found = /^node:(net|internal\/stream_base_commons|internal\/streams\/|stream)/.test(url) ? SOCKET : OTHER;
    }
    memo.set(leafId, found);
    return found;
  };
  const ms = new Map(LAYERS.map((l) => [l, 0]));
  let total = 0;
  let idle = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    total += dt;
    const node = byId.get(profile.samples[i]);
    if (node.callFrame.functionName === '(idle)') {
      idle += dt;
      continue;
    }
    const layer = attribute(node.id);
    ms.set(layer, ms.get(layer) + dt);
  }
  const busy = total - idle;

  // Checks: the shares add up to all busy time, and a layer whose code is in the profile is not
  // silently empty (it may legitimately be: always under a nearer layer; then it is said so).
  const sum = [...ms.values()].reduce((a, b) => a + b, 0);
  const warnings = [];
  if (Math.abs(sum - busy) > 0.001 * Math.max(busy, 1))
    warnings.push(`attributed ${sum.toFixed(1)} ms of ${busy.toFixed(1)} ms busy`);
  const present = new Map();
  const unmatched = new Map(); // packages/files on stacks that no rule knows, with their self time
  const selfMs = new Map();
  for (let i = 0; i < profile.samples.length; i++)
    selfMs.set(profile.samples[i], (selfMs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000);
  for (const n of profile.nodes) {
    const layer = layerOf(n.callFrame);
    if (layer) present.set(layer, (present.get(layer) ?? 0) + 1);
    else if (n.callFrame.url) {
      const u = n.callFrame.url;
      const nm = u.lastIndexOf('/node_modules/');
      const key =
        nm >= 0
          ? u
              .slice(nm + 14)
              .split('/')
              .slice(0, u.slice(nm + 14).startsWith('@') ? 2 : 1)
              .join('/')
          : u.startsWith('node:')
            ? u
            : path.basename(u);
      unmatched.set(key, (unmatched.get(key) ?? 0) + (selfMs.get(n.id) ?? 0));
    }
  }
  for (const [layer, frames] of present)
    if (ms.get(layer) === 0)
      warnings.push(
        `${layer}: ${frames} of its frames are on sampled stacks, but every sample under them went to a nearer layer`,
      );
  return {
    totalMs: total,
    busyMs: busy,
    idleMs: idle,
    layers: LAYERS.map((layer) => ({ layer, ms: ms.get(layer), share: busy > 0 ? ms.get(layer) / busy : 0 })),
    unmatched: [...unmatched.entries()]
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([name, v]) => ({ name, selfMs: Math.round(v * 10) / 10 })),
    warnings,
  };
}

/**
 * The ledgers of several profiles side by side: per layer the share of busy time and, when the
 * run's CPU µs/request is known, µs per request; with the difference of each to the first.
 * `columns`: [{ name, ledger, cpuUsPerReq }].
 */
export function formatLedger(columns) {
  const fmt = (x, d = 0) => (x === null || x === undefined ? '–' : x.toFixed(d));
  const us = (c, l) => (c.cpuUsPerReq ? l.share * c.cpuUsPerReq : null);
  const header = [
    'Layer',
    ...columns.flatMap((c, i) => [
      `${c.name} %`,
      `${c.name} µs/req`,
      ...(i > 0 ? [`${columns[0].name} − ${c.name}`] : []),
    ]),
  ];
  const rows = LAYERS.map((layer, li) => {
    const cells = [layer];
    columns.forEach((c, i) => {
      const l = c.ledger.layers[li];
      cells.push(l.ms > 0 ? fmt(l.share * 100, 1) : '', l.ms > 0 ? fmt(us(c, l)) : '');
      if (i > 0) {
        const a = us(columns[0], columns[0].ledger.layers[li]);
        const b = us(c, l);
        cells.push(a !== null && b !== null && (a > 0 || b > 0) ? `${a - b >= 0 ? '+' : ''}${fmt(a - b)}` : '');
      }
    });
    return cells;
  }).filter((cells) => cells.slice(1).some((c) => c !== '' && c !== '+0' && c !== '0'));
  rows.push([
    'total (busy)',
    ...columns.flatMap((c, i) => [
      // The sum of the lines, not a constant: it shows that every busy sample has a layer.
      fmt(c.ledger.layers.reduce((a, l) => a + l.share, 0) * 100, 1),
      fmt(c.cpuUsPerReq),
      ...(i > 0
        ? [
            columns[0].cpuUsPerReq && c.cpuUsPerReq
              ? `${columns[0].cpuUsPerReq - c.cpuUsPerReq >= 0 ? '+' : ''}${columns[0].cpuUsPerReq - c.cpuUsPerReq}`
              : '',
          ]
        : []),
    ]),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  const out = [
    line(header),
    `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
    ...rows.map(line),
    '',
    ...columns.map(
      (c) =>
        `${c.name}: ${Math.round(c.ledger.busyMs)} ms busy of ${Math.round(c.ledger.totalMs)} ms sampled` +
        (c.ledger.unmatched.length
          ? `; self time in code no rule names: ${c.ledger.unmatched
              .slice(0, 6)
              .map((u) => `${u.name} ${u.selfMs} ms`)
              .join(', ')}`
          : ''),
    ),
  ];
  for (const c of columns) for (const w of c.ledger.warnings) out.push(`${c.name}: ${w}`);
  return out.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (!args.length) {
    console.error('usage: node bench/ledger.mjs <a.cpuprofile> [µs/req] [<b.cpuprofile> [µs/req]] …');
    process.exit(2);
  }
  const columns = [];
  for (const a of args) {
    if (/^\d+(\.\d+)?$/.test(a) && columns.length) columns[columns.length - 1].cpuUsPerReq = Number(a);
    else
      columns.push({
        name: path
          .basename(a)
          .replace(/\.cpuprofile$/, '')
          .replace(/^.*-(service|floor|peer|raw)-.*$/, '$1'),
        ledger: ledger(JSON.parse(readFileSync(a, 'utf8'))),
        cpuUsPerReq: null,
      });
  }
  console.log(formatLedger(columns));
}
