// The comparison: every scenario on each of its servers twice (at the fixed rate BENCH_PASSES
// times), in alternating order or, with BENCH_TOGETHER, all at once, and the profiled runs of the
// cost ledger.
import os from 'node:os';
import { URL } from 'node:url';
import { ledger } from './ledger.mjs';
import { load, measure } from './load.mjs';
import { passOrder, passRatios } from './passes.mjs';
import { get } from './processes.mjs';
import { summarise } from './profile-summary.mjs';
import { aggregate, countStatuses } from './report.mjs';
import { bindScenario } from './scenarios.mjs';
import { CAPACITY, FIXED, ORDER, PASSES, RATE, TOGETHER, distModule, log } from './settings.mjs';

/**
 * The cursor of a real page in the middle of the data: the Link header's next cursor of the
 * unfiltered page after `after`, from the service (or raw, which writes the same links). A
 * cursor is an id, so it serves every status filter.
 */
export function cursorFrom(servers, key) {
  return async (after) => {
    const { encodeCursor } = await distModule('pets/cursor.js');
    const server = servers.service ?? servers.raw;
    if (!server) return encodeCursor(after);
    const page = await get(`${server.url}/v1/pets?limit=20&cursor=${encodeCursor(after)}`, {
      authorization: `Bearer ${key}`,
    });
    const next = /<([^>]+)>;\s*rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
    const cursor = next && new URL(next).searchParams.get('cursor');
    if (page.status !== 200 || !cursor)
      throw new Error(`no next page after id ${after} on ${server.tag}: ${page.status} ${page.text.slice(0, 200)}`);
    return cursor;
  };
}

/** The scenarios with their requests complete (bindScenario), once the servers run. */
export async function bindAll(scenarios, servers, key, keys) {
  const cursorFor = cursorFrom(servers, key);
  const bound = [];
  for (const s of scenarios) bound.push(await bindScenario(s, { keys, cursorFor }));
  return bound;
}

/**
 * Each of `names` runs `scenario` once a pass, each pass in the reverse order of the one before,
 * so drift (table growth, caches, a neighbour's load) does not favour whoever goes first: twice,
 * or `passes` times. `together`: in each pass every server runs at the same time (BENCH_TOGETHER),
 * and the pass's CPU per request of each server against the others is logged. Returns the runs by
 * server.
 */
async function alternate(servers, names, scenario, key, { rate, settle, passes = 2, together = false }) {
  const per = Object.fromEntries(names.map((n) => [n, []]));
  for (let pass = 1; pass <= passes; pass++) {
    const order = passOrder(names, pass);
    if (together) {
      const runs = await Promise.all(
        order.map((name) => measure(servers[name], scenario, key, { rate, shared: true })),
      );
      const settled = settle ? { settleMs: await settle() } : {};
      order.forEach((name, i) => per[name].push({ pass, together: true, ...runs[i], ...settled }));
      log(`${scenario.name} pass ${pass}, the servers at once: ${passRatios(order, runs)}`);
      continue;
    }
    for (const name of order) {
      const r = await measure(servers[name], scenario, key, { rate });
      if (settle) r.settleMs = await settle();
      per[name].push({ pass, ...r });
    }
  }
  return per;
}

/** How long one pass over every key of the scenario lasts at `rate`, with a second to spare. */
const introductionSeconds = (scenario, rate) => Math.ceil(scenario.introduction.keys / rate) + 1;

/** Sends `server` every key of the scenario once, in turn, at `rate` (its introduction's requests). */
export function sendEveryKey(server, scenario, key, rate) {
  const seconds = introductionSeconds(scenario, rate);
  return load(server, { ...scenario, request: scenario.introduction.request }, key, seconds, { rate });
}

/**
 * Sends each server every key of the scenario once, in turn, at the fixed rate, unmeasured: what
 * the capacity phase does when it runs. Without it each server's first measured run would hold
 * every key's first request (its lookup, its first last_used_at write, its first lease), and the
 * keys drawn rarely would come a minute into that run. Returns the service's runs (their statuses
 * join the check that no answer was a 429).
 */
async function introduce(servers, names, scenario, key, rate) {
  const serviceRuns = [];
  for (const name of names) {
    const r = await sendEveryKey(servers[name], scenario, key, rate);
    log(
      `${scenario.name} ${name}: each of the ${scenario.introduction.keys} keys sent first (${r.requests} requests in ${introductionSeconds(scenario, rate)} s, p99 ${r.p99Ms} ms, not measured)`,
    );
    if (name === 'service') serviceRuns.push(r);
  }
  return serviceRuns;
}

/**
 * The rate of the fixed-rate phase: BENCH_RATE, else half the capacity the service (else the
 * first server the table has) showed in this scenario's capacity runs.
 */
function fixedRate(capacityRows) {
  if (RATE > 0) return RATE;
  const by = (n) => capacityRows.find((r) => r.server === n)?.reqPerSec;
  const capacity = by('service') ?? by('candidate') ?? by('floor') ?? by('raw') ?? capacityRows[0]?.reqPerSec;
  return Math.max(1, Math.round((capacity ?? 2) / 2));
}

/**
 * Runs the bound `scenarios` on `servers`: per scenario the capacity phase, then the fixed-rate
 * phase (settings.mjs, RATE). Returns the table's rows (`phase` 'capacity' or 'fixed'), the
 * profiled runs of the scenarios named in `profiles` (at the fixed rate when that phase runs), and
 * per scenario the service's responses by status code over all its runs. `settle`, when given,
 * runs after each measured run, before the next.
 */
export async function compare(servers, scenarios, key, { profiles = [], loadAverages = [], settle = null } = {}) {
  const rows = [];
  const ledgers = [];
  const statusChecks = {};
  for (const scenario of scenarios) {
    const names = ORDER.filter((n) => servers[n]);
    const before = os.loadavg()[0];
    const serviceRuns = [];
    const phase = (name, per, rate) => {
      const phaseRows = names.map((n) => ({ ...aggregate(scenario, n, per[n]), phase: name, rate }));
      const of = (n) => phaseRows.find((r) => r.server === n);
      // Capacity compares req/s; the fixed rate, where every server serves the same requests, CPU
      // per request of the server's process (the other way round: the service's µs over raw's).
      const figure = name === 'capacity' ? (r) => r.reqPerSec : (r) => r.cpuUsPerReq;
      const vs = (r, other) => {
        const base = r.server === other ? undefined : of(other);
        if (!base || typeof figure(base) !== 'number' || typeof figure(r) !== 'number') return null;
        // Against a server that answered nothing in its runs (the peer's slowest plans), any answer
        // is infinitely more.
        return figure(base) > 0 ? figure(r) / figure(base) : figure(r) > 0 ? Infinity : null;
      };
      for (const r of phaseRows) {
        r.vsRaw = vs(r, 'raw');
        r.vsFloor = vs(r, 'floor');
        r.vsPeer = vs(r, 'peer');
        r.vsService = r.server === 'candidate' ? vs(r, 'service') : null;
      }
      rows.push(...phaseRows);
      serviceRuns.push(...(per.service ?? []));
      return phaseRows;
    };
    const capacityRows = CAPACITY
      ? phase('capacity', await alternate(servers, names, scenario, key, { settle }), 0)
      : [];
    const rate = FIXED ? fixedRate(capacityRows) : 0;
    if (FIXED && !CAPACITY && scenario.introduction)
      serviceRuns.push(...(await introduce(servers, names, scenario, key, rate)));
    if (FIXED)
      phase(
        'fixed',
        await alternate(servers, names, scenario, key, { rate, settle, passes: PASSES, together: TOGETHER }),
        rate,
      );
    loadAverages.push({ scenario: scenario.name, before, after: os.loadavg()[0] });

    // One more run each under the CPU profiler, not in the table (profiling costs a few %).
    if (profiles.includes(scenario.name)) {
      for (const name of ['service', 'candidate', 'floor', 'peer'].filter((n) => servers[n])) {
        const r = await measure(servers[name], scenario, key, { profile: true, rate });
        if (name === 'service') serviceRuns.push(r);
        ledgers.push({
          scenario: scenario.name,
          name,
          file: r.profileFile,
          rate,
          cpuUsPerReq: r.cpuUsPerReq,
          reqPerSec: r.reqPerSec,
          ledger: ledger(r.profile),
          profile: r.profile,
          summary: name === 'service' ? summarise(r.profile, 15) : null,
        });
      }
    }
    if (servers.service)
      statusChecks[scenario.name] = countStatuses(serviceRuns.flatMap((r) => [r.statusCodes, r.warmup?.statusCodes]));
  }
  return { rows, ledgers, statusChecks };
}
