// The bench's targets (docs/performance.md), each computed from the table's rows: met, not met, or n/a
// (`met: null`) when a server or scenario it needs was not run. Reported, not asserted.
import { fmt, times } from './report.mjs';
import { CONNECTIONS } from './settings.mjs';

/** One line per target, as the report prints them. */
export function formatTargets(targets) {
  return targets.map((t) => `  ${t.met === null ? 'n/a    ' : t.met ? 'met    ' : 'NOT met'}  ${t.target}: ${t.value}`);
}

/**
 * `rows`: the table's rows of both datasets; `statusChecks`: per scenario, the service's
 * responses by status code over every run of it (warm-ups and profiled runs included).
 */
export function computeTargets({ rows, servers, embedded, statusChecks }) {
  const row = (scenario, server) => rows.find((r) => r.scenarioName === scenario && r.server === server);
  const ran = (scenario) => rows.some((r) => r.scenarioName === scenario);
  const targets = [];
  const add = (target, value, met) => targets.push({ target, value, met });

  const ratio = (scenario, label, min, { against = scenario, againstLabel = 'raw req/s' } = {}) => {
    if (!ran(scenario)) return;
    const s = row(scenario, 'service');
    const r = row(against, 'raw');
    const x = s && r ? s.reqPerSec / r.reqPerSec : null;
    add(
      `${label} ≥ ${min}x ${againstLabel}`,
      x === null ? 'n/a (needs service and raw)' : `${times(x)} (${fmt(s.reqPerSec)} of ${fmt(r.reqPerSec)})`,
      x === null ? null : x >= min,
    );
  };
  // Beside the service's p99, the same run's raw and floor p99 of that scenario: the bound the
  // machine itself sets (with the load generator on the same cores, raw's own p99 can be above
  // the target).
  const p99 = (scenario, label, maxMs) => {
    if (!ran(scenario)) return;
    const s = row(scenario, 'service');
    const others = ['raw', 'floor']
      .map((server) => [server, row(scenario, server)?.p99Ms])
      .filter(([, ms]) => typeof ms === 'number')
      .map(([server, ms]) => `${server} ${fmt(ms, 1)} ms`);
    add(
      `${label} p99 ≤ ${maxMs} ms at ${CONNECTIONS} connections`,
      s
        ? `${fmt(s.p99Ms, 1)} ms${others.length > 0 ? ` (same run: ${others.join(', ')})` : ''}`
        : 'n/a (needs service)',
      s ? typeof s.p99Ms === 'number' && s.p99Ms <= maxMs : null,
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

  ratio('listPets', 'listPets limit=20, one enterprise key', 0.6);
  p99('listPets', 'listPets limit=20, one enterprise key', 20);
  ratio('listPetsManyKeys', 'listPets limit=20, 2,000 keys', 0.55);
  p99('listPetsManyKeys', 'listPets limit=20, 2,000 keys', 20);
  statuses(
    'listPetsManyKeys',
    'listPets, 2,000 keys: no 429 (every key within its plan for the whole run)',
    (c) => !c['429'] && Object.keys(c).every((k) => k.startsWith('2')),
  );
  ratio('getPet', 'getPet', 0.5);
  p99('getPet', 'getPet', 25);
  ratio('listPetsStatus', 'listPets status=sold limit=100', 0.5);
  ratio('createPet', 'createPet (no Idempotency-Key)', 0.5);
  ratio('createPetIdempotent', 'createPet with Idempotency-Key', 0.4, { againstLabel: "raw's plain createPet req/s" });
  p99('createPetIdempotent', 'createPet with Idempotency-Key', 30);
  statuses('createPetIdempotent', 'createPet with Idempotency-Key: every response 201', (c) =>
    Object.keys(c).every((k) => k === '201'),
  );

  // Aged data: a filter must cost little against the unfiltered list and against the same
  // filter on the small table.
  const agedList = row('agedList', 'service');
  for (const s of rows.filter((r) => r.server === 'service' && r.dataset === 'aged' && r.scenarioName !== 'agedList')) {
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

  const svc = rows.filter((r) => r.server === 'service');
  const withPeer = svc.filter((r) => r.vsPeer !== null && r.vsPeer !== undefined);
  if (servers.service && servers.peer)
    add(
      'service ≥ 1.0x peer req/s on every scenario the peer runs',
      withPeer.map((r) => `${r.scenarioName} ${times(r.vsPeer)}`).join(', '),
      withPeer.every((r) => r.vsPeer >= 1),
    );
  else add('service ≥ 1.0x peer req/s on every scenario', 'n/a (needs service and peer)', null);
  for (const s of svc) {
    const raw = row(s.scenarioName, 'raw');
    if (!raw) continue;
    const x = s.rssAfterMiB / raw.rssAfterMiB;
    add(
      `RSS after ${s.scenarioName} ≤ 2x raw's`,
      `${fmt(s.rssAfterMiB)}/${fmt(raw.rssAfterMiB)} MiB = ${times(x)}`,
      x <= 2,
    );
  }
  if (!svc.some((s) => row(s.scenarioName, 'raw')))
    add("RSS after load ≤ 2x raw's", 'n/a (needs service and raw)', null);
  if (servers.service)
    add(
      'start to ready ≤ 2 s (spawn → /readyz 200, PostgreSQL)',
      `${fmt(servers.service.readyMs)} ms`,
      servers.service.readyMs <= 2000,
    );
  if (embedded) add('start to ready ≤ 2 s (embedded default)', `${embedded.readyMs} ms`, embedded.readyMs <= 2000);
  return targets;
}
