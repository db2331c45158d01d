import type { Database } from '../../src/database/database.js';
import { openDatabase } from '../../src/database/open-database.js';
import type { SqlRunner } from '../../src/database/sql-runner.js';
import { PET_SQL } from '../../src/pets/pets.repository.js';
import { createTestDatabase, describeEachDatabase, TestDatabase } from '../support/databases.js';

/**
 * Which index serves each read of listPets on an aged catalogue: the oldest rows all sold, the
 * rest mostly available, pending only among the newest. Walking the primary key for a status
 * filters row by row through every older row of other statuses; the (status, id) index finds
 * the page directly. The statements must get the index whatever the statistics say, in the plan
 * made for the values (a custom plan) and in the one made once for any value (a generic plan).
 */
const ROWS = 60_000;
const SEED = `
  INSERT INTO "pets" ("name", "category_id", "status", "created_at", "updated_at")
  SELECT 'Aged ' || i, 1 + i % 50,
    (CASE WHEN i <= ${ROWS / 3} THEN 'sold' WHEN i > ${ROWS - 600} THEN 'pending' WHEN i % 10 = 0 THEN 'sold' ELSE 'available' END)::"PetStatus",
    now(), now()
  FROM generate_series(1, ${ROWS}) AS i;
  ANALYZE "pets";`;

type Plan = { 'Node Type': string; 'Index Name'?: string; Plans?: Plan[] };

function scans(plan: Plan): string[] {
  const own = plan['Node Type'].includes('Scan')
    ? [`${plan['Node Type']}${plan['Index Name'] ? ` on ${plan['Index Name']}` : ''}`]
    : [];
  return [...own, ...(plan.Plans ?? []).flatMap(scans)];
}

const cases: [string, keyof typeof PET_SQL, unknown[]][] = [
  ['available, first page (common, absent from the oldest third)', 'listAvailable', [21]],
  ['available, after a cursor in the sold prefix', 'listAvailableAfter', [100, 21]],
  ['sold, first page', 'listSold', [21]],
  ['sold, after a cursor past the sold prefix', 'listSoldAfter', [ROWS / 3 + 100, 21]],
  ['pending, first page (rare, only among the newest)', 'listPending', [21]],
  ['pending, after a cursor among the oldest', 'listPendingAfter', [100, 21]],
];

describeEachDatabase('listPets query plans on an aged catalogue (%s)', (kind) => {
  let db: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    database = await openDatabase(db.config().database, () => {}, 'plan test');
    await database.withRunner((sql) => sql.exec(SEED));
  });

  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  const plan = async (sql: SqlRunner, text: string, params: unknown[]): Promise<string[]> => {
    const [row] = await sql.query<{ 'QUERY PLAN': [{ Plan: Plan }] | string }>(`EXPLAIN (FORMAT JSON) ${text}`, params);
    const json = row['QUERY PLAN'];
    return scans((typeof json === 'string' ? JSON.parse(json) : json)[0].Plan);
  };

  it.each(cases)('%s: the (status, id) index, in the custom and the generic plan', async (_what, name, params) => {
    await database.withRunner(async (sql) => {
      expect(await plan(sql, PET_SQL[name], params)).toEqual(['Index Scan on pets_status_id_idx']);
      await sql.exec(`PREPARE generic_${name} AS ${PET_SQL[name]}; SET plan_cache_mode = force_generic_plan`);
      try {
        expect(await plan(sql, `EXECUTE generic_${name}(${params.join(', ')})`, [])).toEqual([
          'Index Scan on pets_status_id_idx',
        ]);
      } finally {
        await sql.exec(`DEALLOCATE generic_${name}; RESET plan_cache_mode`);
      }
    });
  });

  it('and the pages hold what the filter asks for, in id order', async () => {
    const rows = await database.query<{ id: number; status: string }>(
      { name: 'plan_test_page', text: PET_SQL.listSoldAfter },
      [ROWS - 700, 1_000],
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.status === 'sold' && Number(r.id) > ROWS - 700)).toBe(true);
    expect(rows.map((r) => Number(r.id))).toEqual([...rows.map((r) => Number(r.id))].sort((a, b) => a - b));
  });
});
