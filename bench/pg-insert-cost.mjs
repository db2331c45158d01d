// PostgreSQL's own CPU per create: the service's plain insert of a pet beside its insert with
// the Idempotency-Key record (one statement, src/pets/pets.repository.ts), each from 8 connections
// at once on a fresh, migrated database, in alternating rounds. The CPU is that of the 8 server
// processes serving the connections (/proc, Linux), divided by the statements they ran: the work
// the record adds on the database side, which raw's plain INSERT never does.
//
//   node bench/pg-insert-cost.mjs        needs PostgreSQL on BENCH_PG_URL and the build in
//                                        .tmp/bench-dist (npm run bench makes it)
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { cleanup, cleanups, cpuMsOf } from './processes.mjs';
import { createDisposableDatabase } from './pg-admin.mjs';
import { fmt, median } from './report.mjs';
import { migrate } from './setup.mjs';
import { DIST, PG_ADMIN_URL, RUN_ID, distModule } from './settings.mjs';

const CONNECTIONS = 8;
const STATEMENTS = 4_000;
const ROUNDS = 5;

if (!existsSync(path.join(DIST, 'pets/pets.repository.js')))
  throw new Error(`no build in ${DIST}: run npm run bench once (or BENCH_ONLY=listPets npm run bench)`);
const { PET_SQL, insertValues, insertWithRecordValues, petJsonAroundId } = await distModule('pets/pets.repository.js');
const { IdempotencyService } = await distModule('idempotency/idempotency.service.js');

const at = new Date();
const pet = { name: 'Bench pet', categoryId: 9007199254740993n, status: 'pending' };
// completedRecord reads only the clock: no database behind this service.
const idempotency = new IdempotencyService(null, { now: () => at });
/** A first request's completed record, made by the service's own completedRecord. */
const record = () =>
  idempotency.completedRecord(
    { apiKeyId: 1n, key: randomUUID(), fingerprint: 'f'.repeat(64) },
    { status: 201, ...petJsonAroundId(pet), locationBeforeId: 'http://localhost/v1/pets/' },
  );
const STATEMENT_KINDS = [
  ['plain insert', () => ({ name: 'pets_insert', text: PET_SQL.insert, values: insertValues(pet, at) })],
  [
    'insert with its Idempotency-Key record',
    () => ({
      name: 'pets_insertWithRecord',
      text: PET_SQL.insertWithRecord,
      values: insertWithRecordValues(pet, record()),
    }),
  ],
];

try {
  const db = await createDisposableDatabase(PG_ADMIN_URL, `animal_bench_pg_cost_${RUN_ID}`, cleanups);
  await migrate(db.url);
  const clients = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    clients.push(client);
  }
  const pids = await Promise.all(
    clients.map(async (c) => (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid),
  );
  const serverCpuMs = () => pids.reduce((sum, pid) => sum + cpuMsOf(pid), 0);

  const round = async (statement) => {
    let sent = 0;
    const cpu0 = serverCpuMs();
    const t0 = performance.now();
    await Promise.all(
      clients.map(async (client) => {
        while (sent < STATEMENTS) {
          sent++;
          await client.query(statement());
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    return { perSecond: STATEMENTS / seconds, cpuUs: ((serverCpuMs() - cpu0) * 1000) / STATEMENTS };
  };

  for (const [, statement] of STATEMENT_KINDS) await round(statement); // warm-up
  const results = new Map(STATEMENT_KINDS.map(([name]) => [name, []]));
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, statement] of r % 2 === 0 ? STATEMENT_KINDS : [...STATEMENT_KINDS].reverse())
      results.get(name).push(await round(statement));
  console.log(`PostgreSQL ${db.version}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${STATEMENTS} statements`);
  console.log('| statement | per second (median) | PostgreSQL CPU µs per statement (median, range) |');
  console.log('|---|--:|--:|');
  for (const [name, rounds] of results) {
    const cpu = rounds.map((x) => x.cpuUs);
    const rate = median(rounds.map((x) => x.perSecond));
    console.log(
      `| ${name} | ${fmt(rate)} | ${Math.round(median(cpu))} (${Math.round(Math.min(...cpu))}-${Math.round(Math.max(...cpu))}) |`,
    );
  }
  await Promise.all(clients.map((c) => c.end()));
} finally {
  await cleanup();
}
