// The query plans of the service's own statements (PET_SQL of the built service), from
// EXPLAIN ANALYZE on the bench's databases, so a reader sees which index serves each read.
import pg from 'pg';

/**
 * The statement listPets sends and its parameters: each status has its own statements (PET_SQL's
 * listAvailable, listAvailableAfter, …), the status written in them.
 */
export function listStatement(petSql, { status, afterId, take }) {
  const name = status ? `list${status[0].toUpperCase()}${status.slice(1)}` : 'list';
  return afterId ? [petSql[`${name}After`], [afterId, take]] : [petSql[name], [take]];
}

/** The reads of the normal dataset: each must be an index scan, never a sequential scan and sort. */
export function defaultCases(petSql) {
  return [
    ['listPets limit=20', ...listStatement(petSql, { take: 21 })],
    ['listPets status=sold limit=100', ...listStatement(petSql, { status: 'sold', take: 101 })],
    ['listPets limit=20 after a cursor', ...listStatement(petSql, { afterId: 5000, take: 21 })],
    [
      'listPets status=sold limit=100 after a cursor',
      ...listStatement(petSql, { status: 'sold', afterId: 5000, take: 101 }),
    ],
    ['getPet', petSql.get, [4242]],
  ];
}

const isIndexPlan = (text) =>
  text.some((l) => /Index (Only )?Scan/.test(l)) && !text.some((l) => /Seq Scan|Sort/.test(l));
/** A parameter written into SQL text: the cases' parameters are the bench's own numbers and statuses. */
const literal = (v) => (typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);

/**
 * EXPLAIN (`options`) of each case [name, sql, params]. With `generic`, also the plan PostgreSQL
 * gives the statement prepared once and run many times (plan_cache_mode=force_generic_plan):
 * the service sends named prepared statements, which PostgreSQL may switch to that plan after
 * their fifth run, when it estimates it no worse than the plans for the actual parameters.
 */
export async function explainReads(
  databaseUrl,
  petSql,
  { cases = petSql && defaultCases(petSql), options = 'ANALYZE, BUFFERS', generic = false } = {},
) {
  if (!petSql) return null;
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const plans = {};
    for (const [name, sql, params] of cases) {
      const { rows } = await c.query(`EXPLAIN (${options}) ${sql}`, params);
      const text = rows.map((r) => r['QUERY PLAN']);
      plans[name] = { sql, params, plan: text, indexScan: isIndexPlan(text) };
      if (generic) {
        await c.query(`PREPARE bench_generic AS ${sql}`);
        try {
          await c.query('SET plan_cache_mode = force_generic_plan');
          const g = await c.query(`EXPLAIN (${options}) EXECUTE bench_generic(${params.map(literal).join(', ')})`);
          plans[name].genericPlan = g.rows.map((r) => r['QUERY PLAN']);
        } finally {
          await c.query('RESET plan_cache_mode');
          await c.query('DEALLOCATE bench_generic');
        }
      }
    }
    return plans;
  } finally {
    await c.end();
  }
}

/** The first scan node of a plan and its execution time, on one line. */
export function planSummary(plan) {
  const node =
    plan
      .find((l) => /Scan/.test(l))
      ?.trim()
      .replace(/\s+\(cost=.*$/, '')
      .replace(/^->\s*/, '') ?? plan[0];
  const time = plan.find((l) => l.startsWith('Execution Time'));
  return `${node}; ${time}`;
}

/** One line per plan, for the normal dataset's reads. */
export function formatPlanLines(plans) {
  return Object.entries(plans).map(([name, p]) => `  ${name.padEnd(46)} ${planSummary(p.plan)}`);
}

/** Every plan in full, with its statement's parameters, and the generic plan's summary when it was taken. */
export function formatFullPlans(plans) {
  const out = [];
  for (const [name, p] of Object.entries(plans)) {
    out.push('', `  ${name}: parameters (${p.params.map(literal).join(', ')})`, ...p.plan.map((l) => `    ${l}`));
    if (p.genericPlan)
      out.push(`    generic plan (prepared statement after its fifth run): ${planSummary(p.genericPlan)}`);
  }
  return out;
}
