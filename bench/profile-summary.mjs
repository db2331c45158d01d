// Summarises a V8 .cpuprofile (from `node --cpu-prof`, or `BENCH_PROFILE=1 npm run bench`):
// the functions with the most self time, the most inclusive time, and self time per package.
//
// Usage: node bench/profile-summary.mjs <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where a frame's code lives: a package name, "service" (our code), "node" (core) or a V8 pseudo frame. */
function owner(url) {
  if (!url) return '(v8)';
  if (url.startsWith('node:')) return 'node core';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.includes('/generated/prisma/')) return '@prisma/client (generated)';
  return 'service';
}

function frameName(cf) {
  const file = cf.url
    ? cf.url
        .replace(/^.*\/node_modules\//, '')
        .replace(/^file:\/\/.*?\/\.tmp\/[^/]+\//, '')
        .replace(/^file:\/\/.*?\/(dist|src)\//, '$1/')
    : '';
  return `${cf.functionName || '(anonymous)'} ${file ? `${file}:${cf.lineNumber + 1}` : ''}`.trim();
}

export function summarise(profile, top = 25) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  const inclusive = new Map();
  const packages = new Map();
  let total = 0;
  let idle = 0;
  const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000; // µs → ms, attributed to this sample
    const node = byId.get(profile.samples[i]);
    total += dt;
    const fn = node.callFrame.functionName;
    if (fn === '(idle)' || fn === '(program)' || fn === '(garbage collector)') {
      if (fn === '(idle)') idle += dt;
      add(self, fn, dt);
      add(packages, fn, dt);
      continue;
    }
    add(self, frameName(node.callFrame), dt);
    add(packages, owner(node.callFrame.url), dt);
    // Inclusive: each distinct function on the stack once.
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const name = frameName(byId.get(id).callFrame);
      if (name === '(root)' || seen.has(name)) continue;
      seen.add(name);
      add(inclusive, name, dt);
    }
  }
  const busy = total - idle;
  const rank = (m) =>
    [...m.entries()]
      .filter(([k]) => k !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), pctBusy: Math.round((1000 * ms) / busy) / 10 }));
  return {
    totalMs: Math.round(total),
    busyMs: Math.round(busy),
    idleMs: Math.round(idle),
    self: rank(self),
    inclusive: rank(inclusive),
    packages: rank(packages),
  };
}

/**
 * Busy time per function, each sample charged to the nearest JavaScript function on its stack
 * (with the builtins, runtime and kernel work it called), else to its pseudo frame ((program),
 * (garbage collector), (other threads)): in ms, by name. A service file is named by its path
 * inside the build, so two builds of the service compare function by function.
 */
export function nearestFunctions(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map();
  const nameOf = (leafId) => {
    let name = memo.get(leafId);
    if (name !== undefined) return name;
    // Up from the leaf to the first JavaScript frame, or to the frame under the root.
    let id = leafId;
    while (!byId.get(id).callFrame.url && byId.get(parent.get(id))?.callFrame.functionName !== '(root)')
      id = parent.get(id);
    name = frameName(byId.get(id).callFrame);
    memo.set(leafId, name);
    return name;
  };
  const ms = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    if (node.callFrame.functionName === '(idle)') continue;
    const name = nameOf(node.id);
    ms.set(name, (ms.get(name) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000);
  }
  return ms;
}

/**
 * Several servers' nearestFunctions side by side, in µs a request (each function's share of its
 * busy time × the run's CPU µs a request): the `top` functions with the most in any column.
 * `columns`: [{ name, profile, cpuUsPerReq }].
 */
export function formatNearest(columns, top = 30) {
  const per = columns.map((c) => {
    const ms = nearestFunctions(c.profile);
    const busy = [...ms.values()].reduce((a, b) => a + b, 0);
    return new Map([...ms].map(([k, v]) => [k, busy > 0 ? (v / busy) * c.cpuUsPerReq : 0]));
  });
  const names = [...new Set(per.flatMap((m) => [...m.keys()]))]
    .map((name) => ({ name, most: Math.max(...per.map((m) => m.get(name) ?? 0)) }))
    .sort((a, b) => b.most - a.most)
    .slice(0, top)
    .map((r) => r.name);
  const header = `| function (nearest JavaScript frame) | ${columns.map((c) => `${c.name} µs/req`).join(' | ')} |`;
  const rule = `|---|${columns.map(() => '--:').join('|')}|`;
  const rows = names.map((n) => `| ${n} | ${per.map((m) => (m.get(n) ?? 0).toFixed(1)).join(' | ')} |`);
  return [header, rule, ...rows].join('\n');
}

export function formatSummary(s) {
  const lines = [
    `profile: ${s.totalMs} ms sampled, ${s.busyMs} ms busy, ${s.idleMs} ms idle (percentages are of busy time)`,
  ];
  const section = (title, rows) => {
    lines.push('', title);
    for (const r of rows) lines.push(`  ${String(r.pctBusy).padStart(5)}%  ${String(r.ms).padStart(7)} ms  ${r.name}`);
  };
  section('self time by package', s.packages);
  section('self time by function', s.self);
  section('inclusive time by function', s.inclusive);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/profile-summary.mjs <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(formatSummary(summarise(JSON.parse(readFileSync(file, 'utf8')), Number(top ?? 25))));
}
