// The bench's targets (docs/performance.md), each computed from the table's rows: met, not met, or n/a
// (`met: null`) when a server or scenario it needs was not run. Reported, not asserted.
import { fmt, times } from './report.mjs';

/** One line per target, as the report prints them. */
export function formatTargets(targets) {
  return targets.map((t) => `  ${t.met === null ? 'n/a    ' : t.met ? 'met    ' : 'NOT met'}  ${t.target}: ${t.value}`);
}

/**
 * `rows`: the table's rows of both datasets; `statusChecks`: per scenario, the service's
 * responses by status code over every run of it (warm-ups and profiled runs included).
 */
export function computeTargets({ rows, servers, embedded, statusChecks }) {
  const row = (scenario, server, phase = 'capacity') =>
    rows.find((r) => r.scenarioName === scenario && r.server === server && r.phase === phase);
  const ran = (scenario, phase = 'capacity') => rows.some((r) => r.scenarioName === scenario && r.phase === phase);
  const targets = [];
  const add = (target, value, met) => targets.push({ target, value, met });

  const ratio = (scenario, label, min, { against = scenario, againstLabel = 'raw req/s' } = {}) => {
    if (!ran(scenario)) return;
    const s = row(scenario, 'service');
    const r = row(against, 'raw');
    const x = s && r ? s.reqPerSec / r.reqPerSec : null;
    add(
      `${label}: capacity ≥ ${min}x ${againstLabel}`,
      x === null ? 'n/a (needs service and raw)' : `${times(x)} (${fmt(s.reqPerSec)} of ${fmt(r.reqPerSec)})`,
      x === null ? null : x >= min,
    );
  };
  // At the fixed rate (half the service's capacity), every server serves the same requests: the
  // service's p99 against raw's, and the CPU its process spends per request against the floor's.
  const atRate = (r) => `at ${fmt(r.rate)} req/s`;
  const p99 = (scenario, label, maxX = 1.5) => {
    if (!ran(scenario, 'fixed')) return;
    const s = row(scenario, 'service', 'fixed');
    const r = row(scenario, 'raw', 'fixed');
    const ok = s && r && typeof s.p99Ms === 'number' && typeof r.p99Ms === 'number';
    add(
      `${label}: p99 at the fixed rate ≤ ${maxX}x raw's`,
      ok
        ? `${times(s.p99Ms / r.p99Ms)} (${fmt(s.p99Ms, 1)} of ${fmt(r.p99Ms, 1)} ms ${atRate(s)})`
        : 'n/a (needs service and raw)',
      ok ? s.p99Ms <= maxX * r.p99Ms : null,
    );
  };
  const cpu = (scenario, label, maxX = 1.3) => {
    if (!ran(scenario, 'fixed')) return;
    const s = row(scenario, 'service', 'fixed');
    const f = row(scenario, 'floor', 'fixed');
    const ok = s && f && s.cpuUsPerReq > 0 && f.cpuUsPerReq > 0;
    add(
      `${label}: CPU per request at the fixed rate ≤ ${maxX}x the floor's`,
      ok
        ? `${times(s.cpuUsPerReq / f.cpuUsPerReq)} (${fmt(s.cpuUsPerReq)} of ${fmt(f.cpuUsPerReq)} µs ${atRate(s)})`
        : 'n/a (needs service and floor)',
      ok ? s.cpuUsPerReq <= maxX * f.cpuUsPerReq : null,
    );
  };
  const statuses = (scenario, label, ok) => {
    const codes = statusChecks[scenario];
    if (!codes) return;
    const total = Object.values(codes).reduce((a, b) => a + b, 0);
    const text =
      Object.entries(codes)
        .map(([code, n]) => `${code} × ${fmt(n)}`)
        .join(', ') || 'no responses';
    add(label, `${text} (${fmt(total)} responses, warm-ups and profiled runs included)`, total > 0 && ok(codes));
  };

  ratio('listPets', 'listPets limit=20, one enterprise key', 0.65);
  cpu('listPets', 'listPets limit=20, one enterprise key');
  p99('listPets', 'listPets limit=20, one enterprise key');
  ratio('listPetsManyKeys', 'listPets limit=20, 2,000 keys', 0.6);
  cpu('listPetsManyKeys', 'listPets limit=20, 2,000 keys');
  p99('listPetsManyKeys', 'listPets limit=20, 2,000 keys');
  statuses(
    'listPetsManyKeys',
    'listPets, 2,000 keys: no 429 (every key within its plan for the whole run)',
    (c) => !c['429'] && Object.keys(c).every((k) => k.startsWith('2')),
  );
  ratio('getPet', 'getPet', 0.5);
  p99('getPet', 'getPet');
  ratio('listPetsStatus', 'listPets status=sold limit=100', 0.5);
  ratio('createPet', 'createPet (no Idempotency-Key)', 0.5);
  ratio('createPetIdempotent', 'createPet with Idempotency-Key', 0.4, { againstLabel: "raw's plain createPet req/s" });
  p99('createPetIdempotent', 'createPet with Idempotency-Key');
  statuses('createPetIdempotent', 'createPet with Idempotency-Key: every response 201', (c) =>
    Object.keys(c).every((k) => k === '201'),
  );

  // Aged data: a filter must cost little against the unfiltered list and against the same
  // filter on the small table.
  const agedList = row('agedList', 'service');
  const capacityRows = rows.filter((r) => r.phase === 'capacity');
  for (const s of capacityRows.filter(
    (r) => r.server === 'service' && r.dataset === 'aged' && r.scenarioName !== 'agedList',
  )) {
    add(
      `${s.scenario} ≥ 0.7x the aged unfiltered list`,
      agedList
        ? `${times(s.reqPerSec / agedList.reqPerSec)} (${fmt(s.reqPerSec)} of ${fmt(agedList.reqPerSec)})`
        : 'n/a (run agedList too)',
      agedList ? s.reqPerSec >= 0.7 * agedList.reqPerSec : null,
    );
    const small = row(s.matching, 'service');
    add(
      `${s.scenario} within 1.5x of the same on 10,000 rows (≥ 0.67x its req/s)`,
      small
        ? `${times(s.reqPerSec / small.reqPerSec)} (${fmt(s.reqPerSec)} of ${fmt(small.reqPerSec)}, ${s.matching})`
        : `n/a (run ${s.matching} too)`,
      small ? s.reqPerSec * 1.5 >= small.reqPerSec : null,
    );
  }

  const svc = capacityRows.filter((r) => r.server === 'service');
  const withPeer = svc.filter((r) => r.vsPeer !== null && r.vsPeer !== undefined);
  if (servers.service && servers.peer)
    add(
      'service ≥ 1.0x peer req/s on every scenario the peer runs',
      withPeer.map((r) => `${r.scenarioName} ${times(r.vsPeer)}`).join(', '),
      withPeer.every((r) => r.vsPeer >= 1),
    );
  else add('service ≥ 1.0x peer req/s on every scenario', 'n/a (needs service and peer)', null);
  // The RSS a scenario leaves: the larger of its two phases' readings, for each server.
  const rssAfter = (scenario, server) => {
    const xs = rows.filter((r) => r.scenarioName === scenario && r.server === server).map((r) => r.rssAfterMiB);
    return xs.length ? Math.max(...xs) : null;
  };
  let rssCompared = false;
  for (const name of new Set(rows.filter((r) => r.server === 'service').map((r) => r.scenarioName))) {
    const raw = rssAfter(name, 'raw');
    if (!raw) continue;
    rssCompared = true;
    const x = rssAfter(name, 'service') / raw;
    add(`RSS after ${name} ≤ 1.5x raw's`, `${fmt(rssAfter(name, 'service'))}/${fmt(raw)} MiB = ${times(x)}`, x <= 1.5);
  }
  if (!rssCompared) add("RSS after load ≤ 1.5x raw's", 'n/a (needs service and raw)', null);
  if (servers.service)
    add(
      'start to ready ≤ 2 s (spawn → /readyz 200, PostgreSQL)',
      `${fmt(servers.service.readyMs)} ms`,
      servers.service.readyMs <= 2000,
    );
  if (embedded) add('start to ready ≤ 2 s (embedded default)', `${embedded.readyMs} ms`, embedded.readyMs <= 2000);
  return targets;
}
