// The comparison: every scenario on each of its servers twice, in alternating order, and the
// profiled runs of the cost ledger.
import os from 'node:os';
import { URL } from 'node:url';
import { ledger } from './ledger.mjs';
import { measure } from './load.mjs';
import { get } from './processes.mjs';
import { summarise } from './profile-summary.mjs';
import { aggregate, countStatuses } from './report.mjs';
import { bindScenario } from './scenarios.mjs';
import { ORDER, distModule } from './settings.mjs';

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
 * Runs the bound `scenarios` on `servers`. Returns the table's rows, the profiled runs of the scenarios
 * named in `profiles`, and per scenario the service's responses by status code over all its runs.
 * `settle`, when given, runs after each measured run, before the next.
 */
export async function compare(servers, scenarios, key, { profiles = [], loadAverages = [], settle = null } = {}) {
  const rows = [];
  const ledgers = [];
  const statusChecks = {};
  for (const scenario of scenarios) {
    const names = ORDER.filter((n) => servers[n]);
    // Twice each, the second pass in the reverse order, so drift (table growth, caches, a
    // neighbour's load) does not favour whoever goes first.
    const per = Object.fromEntries(names.map((n) => [n, []]));
    const order = [...names, ...[...names].reverse()];
    const before = os.loadavg()[0];
    for (const [i, name] of order.entries()) {
      const r = await measure(servers[name], scenario, key);
      if (settle) r.settleMs = await settle();
      per[name].push({ pass: i < names.length ? 1 : 2, ...r });
    }
    loadAverages.push({ scenario: scenario.name, before, after: os.loadavg()[0] });
    const scenarioRows = names.map((n) => aggregate(scenario, n, per[n]));
    const rate = (n) => scenarioRows.find((r) => r.server === n)?.reqPerSec ?? null;
    // Against a server that answered nothing in its runs (the peer's slowest plans), any answer
    // is infinitely more.
    const vs = (r, other) => {
      const base = r.server === other ? null : rate(other);
      if (base === null) return null;
      return base > 0 ? r.reqPerSec / base : r.reqPerSec > 0 ? Infinity : null;
    };
    for (const r of scenarioRows) {
      r.vsRaw = vs(r, 'raw');
      r.vsFloor = vs(r, 'floor');
      r.vsPeer = vs(r, 'peer');
      r.vsService = r.server === 'candidate' ? vs(r, 'service') : null;
    }
    rows.push(...scenarioRows);
    const serviceRuns = [...(per.service ?? [])];

    // One more run each under the CPU profiler, not in the table (profiling costs a few %).
    if (profiles.includes(scenario.name)) {
      for (const name of ['service', 'floor', 'peer'].filter((n) => servers[n])) {
        const r = await measure(servers[name], scenario, key, { profile: true });
        if (name === 'service') serviceRuns.push(r);
        ledgers.push({
          scenario: scenario.name,
          name,
          file: r.profileFile,
          cpuUsPerReq: r.cpuUsPerReq,
          reqPerSec: r.reqPerSec,
          ledger: ledger(r.profile),
          summary: name === 'service' ? summarise(r.profile, 15) : null,
        });
      }
    }
    if (servers.service)
      statusChecks[scenario.name] = countStatuses(serviceRuns.flatMap((r) => [r.statusCodes, r.warmup?.statusCodes]));
  }
  return { rows, ledgers, statusChecks };
}
