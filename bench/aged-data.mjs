// The aged dataset: 2,000,000 pets whose statuses are skewed along the ids, as years of trading
// leave them, in a database of its own that outlives the run. Its name carries a hash of the
// seed and of the migrations, so a bench run reuses it while both are unchanged (a comment on
// the database, written last, marks it complete) and builds a fresh one otherwise. Databases of
// older hashes are left alone (another checkout may be using one); drop them by hand.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { databaseUrl, migrate } from './setup.mjs';
import { PG_ADMIN_URL, ROOT, log } from './settings.mjs';

export const AGED_PETS = 2_000_000;
const OLDEST_SOLD = 200_000;
const MIDDLE = 1_000_000;

/**
 * The skew, by id:
 * - 1 to 200,000, the oldest: all sold, so a list of another status that walks the primary key
 *   passes all of them before its first row;
 * - 200,001 to 1,000,000: 90% available, 5% pending, 5% sold;
 * - 1,000,001 to 2,000,000: 90% available, 10% pending but one sold in 50,000 (20 rows). Sold is
 *   common overall (12%) and rare here, the mirror: a status=sold page after a cursor in this
 *   part that walks the primary key reads to the end of the table for its 20 rows.
 * Ids are given explicitly, so the skew is the same in every build; every hundredth categoryId
 * is above 2^53, as in the normal seed.
 */
const INSERT_SQL = `
INSERT INTO "pets" ("id", "name", "category_id", "status", "created_at", "updated_at")
SELECT i, 'Pet ' || i,
       CASE WHEN i % 100 = 0 THEN 9223372036854775807 - i ELSE 1 + i % 50 END,
       (CASE
          WHEN i <= ${OLDEST_SOLD} THEN 'sold'
          WHEN i % 20 = 0 THEN 'pending'
          WHEN i % 20 = 1 AND (i <= ${MIDDLE} OR i % 50000 = 1) THEN 'sold'
          WHEN i % 20 = 1 THEN 'pending'
          ELSE 'available'
        END)::"PetStatus",
       now() - (${AGED_PETS} - i) * interval '1 minute',
       now() - (${AGED_PETS} - i) * interval '1 minute'
FROM generate_series(1, ${AGED_PETS}) AS i`;

/** The migrations' text, in the order they are applied. */
function migrationsText() {
  const dir = path.join(ROOT, 'prisma/migrations');
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => `${name}\n${readFileSync(path.join(dir, name, 'migration.sql'), 'utf8')}`)
    .join('\n');
}

/** The database's name: the hash of everything that decides its content. */
export function agedDatabaseName() {
  const hash = createHash('sha256')
    .update(INSERT_SQL)
    .update(loadIndexesAfter.toString())
    .update(migrationsText())
    .digest('hex');
  return `animal_bench_aged_${hash.slice(0, 16)}`;
}

const COMPLETE = (name) => `bench aged dataset ${name}: complete`;

/**
 * The aged database, reused when a complete one of the current hash exists, else (re)built.
 * An advisory lock on the admin database keeps two benches from building it at once.
 */
export async function agedDatabase() {
  const name = agedDatabaseName();
  const t0 = performance.now();
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    const lockKey = parseInt(name.slice(-12), 16);
    await admin.query('SELECT pg_advisory_lock($1)', [lockKey]);
    try {
      const { rows } = await admin.query(
        "SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1",
        [name],
      );
      if (rows[0]?.comment === COMPLETE(name)) {
        const checkMs = performance.now() - t0;
        log(`aged database ${name}: reused (complete; checked in ${Math.round(checkMs)} ms)`);
        return { name, url: databaseUrl(name), reused: true, checkMs, seedMs: null };
      }
      if (rows.length) log(`aged database ${name}: incomplete, dropping it`);
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${name}"`);
      const url = databaseUrl(name);
      log(`aged database ${name}: migrating and seeding ${AGED_PETS.toLocaleString('en-US')} pets`);
      const s0 = performance.now();
      await migrate(url);
      await seed(url);
      const seedMs = performance.now() - s0;
      await admin.query(`COMMENT ON DATABASE "${name}" IS '${COMPLETE(name)}'`);
      log(`aged database ${name}: seeded in ${(seedMs / 1000).toFixed(1)} s`);
      return { name, url, reused: false, checkMs: null, seedMs };
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [lockKey]);
    }
  } finally {
    await admin.end();
  }
}

async function seed(url) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("SET maintenance_work_mem = '256MB'");
    await loadIndexesAfter(c, () => c.query(INSERT_SQL));
    await c.query(`SELECT setval(pg_get_serial_sequence('"pets"', 'id'), ${AGED_PETS})`);
    // VACUUM sets the visibility map, as autovacuum has long done on aged data.
    await c.query('VACUUM (ANALYZE) "pets"');
  } finally {
    await c.end();
  }
}

/**
 * Runs `load` with the pets table's indexes dropped, then builds them again from their own
 * definitions (whatever the migrations made them), the primary key as a constraint again.
 */
async function loadIndexesAfter(c, load) {
  const { rows } = await c.query(`
    SELECT i.indexrelid::regclass::text AS index, pg_get_indexdef(i.indexrelid) AS definition, con.conname AS constraint, con.contype AS type
    FROM pg_index i LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid
    WHERE i.indrelid = '"pets"'::regclass`);
  for (const r of rows)
    await c.query(r.constraint ? `ALTER TABLE "pets" DROP CONSTRAINT "${r.constraint}"` : `DROP INDEX ${r.index}`);
  await load();
  for (const r of rows) {
    await c.query(r.definition);
    if (r.constraint) {
      const kind = r.type === 'p' ? 'PRIMARY KEY' : 'UNIQUE';
      await c.query(`ALTER TABLE "pets" ADD CONSTRAINT "${r.constraint}" ${kind} USING INDEX ${r.index}`);
    }
  }
}
