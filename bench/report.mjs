// The report: the tables of the measured runs, the rows they are made of, and the machine's
// load that the bench itself does not explain.
import os from 'node:os';
import path from 'node:path';
import { keyHeadroom } from './keys.mjs';
import { formatLedger } from './ledger.mjs';
import { SLOW_WINDOW_MS } from './paced.mjs';
import { formatNearest, formatSummary } from './profile-summary.mjs';
import { DURATION, PERF, ROOT } from './settings.mjs';

export const fmt = (n, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n)
    ? '–'
    : Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const times = (r) => (r === null || r === undefined ? '' : r === Infinity ? '∞' : `${r.toFixed(2)}x`);

/** A Markdown table, the first `left` columns left-aligned, the rest right-aligned. */
export function markdown(header, body, left = 2) {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) =>
    `| ${cells.map((c, i) => (i < left ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((w, i) => (i < left ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`,
    ...body.map(line),
  ].join('\n');
}

export function mainTable(rows) {
  // "vs service" only when a candidate build ran (BENCH_CANDIDATE).
  const candidate = rows.some((r) => r.server === 'candidate');
  return markdown(
    [
      'Scenario',
      'Server',
      'req/s',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'p99.9 ms',
      'errors',
      'non-2xx',
      'RSS after MiB',
      'CPU µs/req',
      'vs raw',
      'vs floor',
      'vs peer',
      ...(candidate ? ['vs service'] : []),
    ],
    rows.map((r) => [
      r.scenario,
      r.server,
      fmt(r.reqPerSec),
      fmt(r.p50Ms, 1),
      fmt(r.p90Ms, 1),
      fmt(r.p99Ms, 1),
      fmt(r.p999Ms, 1),
      fmt(r.errors),
      fmt(r.non2xx),
      fmt(r.rssAfterMiB),
      fmt(r.cpuUsPerReq),
      times(r.vsRaw),
      times(r.vsFloor),
      times(r.vsPeer),
      ...(candidate ? [times(r.vsService)] : []),
    ]),
  );
}

/**
 * The fixed-rate phase: every server offered the same requests a second; CPU per request of the
 * server's process (and how much of it the kernel spent on its behalf), of PostgreSQL (every
 * `postgres` process) and of Redis, and the server's CPU over raw's and the floor's.
 */
export function fixedTable(rows) {
  const candidate = rows.some((r) => r.server === 'candidate');
  // Servers run at once (BENCH_TOGETHER) share PostgreSQL and Redis: no total of their own.
  const total = (r) =>
    r.runs?.some((run) => run.together) ||
    [r.cpuUsPerReq, r.pgCpuUsPerReq, r.redisCpuUsPerReq].every((x) => x === null || x === undefined)
      ? null
      : (r.cpuUsPerReq ?? 0) + (r.pgCpuUsPerReq ?? 0) + (r.redisCpuUsPerReq ?? 0);
  return markdown(
    [
      'Scenario',
      'Server',
      'offered req/s',
      'served req/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'non-2xx',
      'CPU µs/req',
      'of it kernel µs/req',
      'PostgreSQL µs/req',
      'Redis µs/req',
      'Redis scripts/req',
      'all µs/req',
      'CPU vs raw',
      'CPU vs floor',
      ...(candidate ? ['CPU vs service'] : []),
    ],
    rows.map((r) => [
      r.scenario,
      r.server,
      fmt(r.rate),
      fmt(r.reqPerSec),
      fmt(r.p50Ms, 1),
      fmt(r.p99Ms, 1),
      fmt(r.errors),
      fmt(r.non2xx),
      fmt(r.cpuUsPerReq),
      fmt(r.kernelUsPerReq),
      fmt(r.pgCpuUsPerReq),
      fmt(r.redisCpuUsPerReq),
      fmt(r.redisScriptsPerReq, 3),
      fmt(total(r)),
      times(r.vsRaw),
      times(r.vsFloor),
      ...(candidate ? [times(r.vsService)] : []),
    ]),
  );
}

export function loopTable(rows) {
  return markdown(
    [
      'Scenario',
      'Server',
      'GC pauses',
      'GC total ms',
      'GC max ms',
      'GC % of run',
      'loop delay p50 ms',
      'p99 ms',
      'max ms',
      `slowest 1% in ${SLOW_WINDOW_MS} ms windows`,
      'PostgreSQL connections opened / closed',
    ],
    rows.map((r) => [
      r.phase === 'fixed' ? `${r.scenario} at ${fmt(r.rate)}/s` : r.scenario,
      r.server,
      fmt(r.gc.count),
      fmt(r.gc.totalMs),
      fmt(r.gc.maxMs, 1),
      fmt((100 * r.gc.totalMs) / ((r.seconds ?? DURATION) * 1000), 1),
      fmt(r.loop.p50, 1),
      fmt(r.loop.p99, 1),
      fmt(r.loop.max, 1),
      fmt(r.slowWindows),
      r.pgOpened === null ? '–' : `${fmt(r.pgOpened)} / ${fmt(r.pgClosed)}`,
    ]),
  );
}

export const mean = (xs) => {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x));
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
};
export const max = (xs) => {
  const v = xs.filter((x) => typeof x === 'number');
  return v.length ? Math.max(...v) : null;
};
export const sum = (xs) => xs.reduce((a, b) => a + (b ?? 0), 0);
/** The middle value (the upper of the two middle ones for an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Sums maps of status code to count. */
export function countStatuses(maps) {
  const total = {};
  for (const m of maps) for (const [code, n] of Object.entries(m ?? {})) total[code] = (total[code] ?? 0) + n;
  return total;
}

/** One row of the table: the mean of a server's runs of a scenario (errors summed, maxima kept). */
export function aggregate(scenario, server, runs) {
  const m = (k) => mean(runs.map((r) => r[k]));
  return {
    seconds: m('seconds'),
    scenario: scenario.label,
    scenarioName: scenario.name,
    dataset: scenario.dataset ?? 'normal',
    matching: scenario.matching ?? null,
    server,
    reqPerSec: Math.round(m('reqPerSec')),
    p50Ms: m('p50Ms'),
    p90Ms: m('p90Ms'),
    p99Ms: m('p99Ms'),
    p999Ms: m('p999Ms'),
    maxMs: max(runs.map((r) => r.maxMs)),
    errors: sum(runs.map((r) => r.errors)),
    non2xx: sum(runs.map((r) => r.non2xx)),
    // Every response of the scenario's runs, warm-ups included, by status code.
    statusCodes: countStatuses(runs.flatMap((r) => [r.statusCodes, r.warmup?.statusCodes])),
    rssAfterMiB: m('rssAfterMiB'),
    cpuUsPerReq: m('cpuUsPerReq'),
    kernelUsPerReq: m('kernelUsPerReq'),
    pgCpuUsPerReq: m('pgCpuUsPerReq'),
    redisCpuUsPerReq: m('redisCpuUsPerReq'),
    redisScriptsPerReq: m('redisScriptsPerReq'),
    logLinesPerReq: m('logLinesPerReq'),
    slowWindows: m('slowWindows'),
    // Summed over the runs: a connection opened or closed anywhere is a stall source in any run.
    pgOpened: runs.every((r) => r.pgOpened == null) ? null : sum(runs.map((r) => r.pgOpened)),
    pgClosed: runs.every((r) => r.pgClosed == null) ? null : sum(runs.map((r) => r.pgClosed)),
    gc: {
      count: mean(runs.map((r) => r.loop.gc.count)),
      totalMs: mean(runs.map((r) => r.loop.gc.totalMs)),
      maxMs: max(runs.map((r) => r.loop.gc.maxMs)),
    },
    loop: {
      p50: mean(runs.map((r) => r.loop.eventLoopDelayMs.p50)),
      p99: mean(runs.map((r) => r.loop.eventLoopDelayMs.p99)),
      max: max(runs.map((r) => r.loop.eventLoopDelayMs.max)),
    },
    runs: runs.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'profile'))),
  };
}

/** Loads on the machine that the bench itself does not explain make every figure unreliable. */
export function quietMachineWarnings(before, after) {
  const w = [];
  if (before > 1.5)
    w.push(
      `the machine was busy before the run: 1-minute load average ${before.toFixed(2)} (> 1.5); the figures are skewed`,
    );
  // The bench keeps about one runnable process per core (load generator, server, PostgreSQL).
  const expected = os.cpus().length + 1;
  if (after - before > expected)
    w.push(
      `the load average rose from ${before.toFixed(2)} to ${after.toFixed(2)}, more than the bench's own load (~${expected}) explains: other work ran meanwhile`,
    );
  return w;
}

/** What each scenario with a note sends, below the table. */
export function scenarioNotes(scenarios) {
  const noted = scenarios.filter((s) => s.note);
  return noted.length ? ['', ...noted.map((s) => `${s.label}: ${s.note}.`)] : [];
}

/**
 * The many keys' scenario: the keys by plan, what the service answered over every run of it,
 * and how close the busiest key came to its limits at the service's rate.
 */
export function manyKeysReport(keys, serviceRow, codes = {}) {
  const byPlan = {};
  for (const k of keys) byPlan[k.plan] = (byPlan[k.plan] ?? 0) + 1;
  const total = Object.values(codes).reduce((a, b) => a + b, 0);
  const rejected = codes['429'] ?? 0;
  const other =
    total -
    rejected -
    Object.entries(codes)
      .filter(([c]) => c.startsWith('2'))
      .reduce((a, [, n]) => a + n, 0);
  const peak = Math.max(...serviceRow.runs.map((r) => r.reqPerSec));
  const { perMinuteShare, perDayShare } = keyHeadroom(keys, { reqPerSec: peak, totalRequests: total });
  return [
    '',
    `listPetsManyKeys: ${fmt(keys.length)} keys (${Object.entries(byPlan)
      .map(([p, n]) => `${n} ${p}`)
      .join(', ')}), one address each. ` +
      `The service answered ${fmt(total)} requests over all its runs of it (warm-ups included): ${rejected === 0 ? 'no 429' : `${fmt(rejected)} × 429`}, ${fmt(other)} other non-2xx. ` +
      `At its fastest run (${fmt(peak)} req/s) each key used ${fmt(perMinuteShare * 100)}% of its per-minute limit on average; the most of a day's limit any key used: ${fmt(perDayShare * 100, 1)}%.`,
  ];
}

/** The ledgers of the profiled runs, for the JSON. */
export function ledgerJson(ledgers) {
  if (!ledgers.length) return null;
  return {
    scenarios: [...new Set(ledgers.map((l) => l.scenario))],
    profiles: ledgers.map((l) => ({
      scenario: l.scenario,
      server: l.name,
      file: path.relative(ROOT, l.file),
      rate: l.rate || null,
      reqPerSec: l.reqPerSec,
      cpuUsPerReq: l.cpuUsPerReq,
      busyMs: Math.round(l.ledger.busyMs),
      layers: l.ledger.layers
        .filter((x) => x.ms > 0)
        .map((x) => ({
          layer: x.layer,
          pctBusy: Math.round(x.share * 1000) / 10,
          usPerReq: l.cpuUsPerReq ? Math.round(x.share * l.cpuUsPerReq * 10) / 10 : null,
        })),
      unmatched: l.ledger.unmatched.slice(0, 20),
      warnings: l.ledger.warnings,
    })),
    serviceTopFunctions: Object.fromEntries(ledgers.filter((l) => l.summary).map((l) => [l.scenario, l.summary])),
  };
}

/** Per profiled scenario: the ledgers side by side and the service's top functions. */
export function ledgerLines(ledgers) {
  const out = [];
  for (const scenario of new Set(ledgers.map((l) => l.scenario))) {
    const these = ledgers.filter((l) => l.scenario === scenario);
    const service = these.find((l) => l.name === 'service');
    out.push(
      '',
      `Cost ledger, ${scenario} (bench/ledger.mjs): one extra profiled run per server${these[0].rate ? ` at ${fmt(these[0].rate)} req/s` : ''}, not in the table; each sample goes to the nearest layer on its stack; µs/req = share of busy samples × that run's CPU µs/req; ${PERF ? 'sampled by Linux perf by CPU time, every thread (BENCH_PERF: bench/perf-profile.mjs)' : 'the profile samples by the clock, so the lines holding socket writes (response writing, database, Redis) also hold time off the CPU and read high, the others low'} (${these.map((l) => `${l.name} ${fmt(l.reqPerSec)} req/s`).join(', ')}).`,
      `Profiles: ${these.map((l) => path.relative(ROOT, l.file)).join(', ')}`,
      '',
      formatLedger(these.map((l) => ({ name: l.name, ledger: l.ledger, cpuUsPerReq: l.cpuUsPerReq }))),
    );
    // By CPU time a function's own cost is steady enough to compare across builds and servers.
    if (PERF)
      out.push(
        '',
        `${scenario} by function (BENCH_PERF): each sample goes to the nearest JavaScript function on its stack, with the builtins, runtime and kernel work under it:`,
        '',
        formatNearest(these.map((l) => ({ name: l.name, profile: l.profile, cpuUsPerReq: l.cpuUsPerReq }))),
      );
    if (service)
      out.push('', `CPU profile of the service during ${scenario}, top functions:`, formatSummary(service.summary));
  }
  return out;
}
