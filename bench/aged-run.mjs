// The scenarios of the aged dataset: raw, the floor, the peer and the service started a second
// time, against the aged database (bench/aged-data.mjs), after the servers of the normal
// dataset have stopped, so each set has the machine to itself. Then the plans of the service's
// statements for each scenario, on the aged database, with the scenario's parameters.
import { agedDatabase } from './aged-data.mjs';
import { bindAll, compare } from './compare.mjs';
import { issueKey } from './keys.mjs';
import { explainReads, listStatement } from './plans.mjs';
import { freePort } from '../test/support/local-servers.mjs';
import { cleanups, get, memoryOf, startServer, stopProcess } from './processes.mjs';
import { runSql, serverSpecs, waitForIdle } from './setup.mjs';
import { ORDER, RUN_ID, log } from './settings.mjs';

/** The statement and parameters the service sends for a scenario's first request. */
function statementOf(petSql, s) {
  return listStatement(petSql, { status: s.status, afterId: s.afterId, take: 21 });
}

export async function runAged({ scenarios, petSql, prefix, prefixSupported, firstPort, loadAverages }) {
  const db = await agedDatabase();
  const key = issueKey({ DATABASE_URL: db.url }) ?? 'bench-no-key';
  // The key is the only row a run adds; removed so the database stays as built.
  cleanups.push(() => runSql(db.url, `DELETE FROM "api_keys" WHERE "name" = 'bench ${RUN_ID}'`));
  const names = ORDER.filter((n) => n !== 'candidate');
  const servers = {};
  let next = firstPort;
  const ports = {};
  for (const name of names) next = (ports[name] = await freePort(next)) + 1;
  const specs = serverSpecs({ db, petSql, ports, prefix, prefixSupported });
  for (const name of names)
    servers[name] = await startServer(name, specs[name][0], specs[name][1], ports[name], { tag: `${name}-aged` });
  if (servers.service) {
    const probe = await get(`${servers.service.url}/v1/pets?limit=1`, { authorization: `Bearer ${key}` });
    if (probe.status !== 200) throw new Error(`aged: GET /v1/pets with the bench key answered ${probe.status}`);
  }
  const bound = await bindAll(scenarios, servers, key, null);
  // Slow plans leave queries queued behind a run; the next run starts once they are done.
  const settle = async () => {
    const ms = await waitForIdle(db.name);
    if (ms > 1000) log(`aged: waited ${(ms / 1000).toFixed(1)} s for the previous run's queries to finish`);
    return ms;
  };
  const { rows } = await compare(servers, bound, key, { loadAverages, settle });
  const memory = Object.fromEntries(names.map((n) => [n, memoryOf(servers[n].child.pid)]));
  await Promise.all(names.map((n) => stopProcess(servers[n].child)));

  const plans = await explainReads(db.url, petSql, {
    cases: bound.map((s) => [s.label, ...statementOf(petSql, s)]),
    options: 'ANALYZE, BUFFERS, COSTS OFF',
    generic: true,
  });
  return {
    db,
    rows,
    plans,
    memory,
    readyMs: Object.fromEntries(names.map((n) => [n, Math.round(servers[n].readyMs)])),
    next,
  };
}
