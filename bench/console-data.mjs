// The console's dataset: 10,000 API keys on every plan and state, 1,680,000 usage rows (each
// key's last 168 hours, one operation an hour) and a few audit entries per key, written with
// SQL into a fresh, migrated database.
import { performance } from 'node:perf_hooks';
import pg from 'pg';

export const CONSOLE_KEYS = 10_000;
export const USAGE_HOURS = 168;
export const AUDIT_ENTRIES_PER_KEY = 3;

/** Words of the keys' names: "<word> <word> <n>", so a part of a name matches a few keys or many. */
const FIRST = ['Acme', 'Blue', 'Cedar', 'Delta', 'Ember', 'Fjord', 'Granite', 'Harbor', 'Iris', 'Juniper'];
const SECOND = ['Labs', 'Retail', 'Clinic', 'Kennels', 'Shelter', 'Studio', 'Logistics', 'Farms', 'Vets', 'Market'];

const sqlArray = (words) => `ARRAY[${words.map((w) => `'${w}'`).join(', ')}]`;

/**
 * The keys. Ids 1 to CONSOLE_KEYS in order of creation (one an hour, the newest an hour old);
 * plans in turn (free, pro, business, enterprise with its own limits); 3% revoked, 2% expired,
 * 1% expiring within the week, 20% with a far expiry, the rest without; v2 prefixes from md5.
 */
const KEYS_SQL = `
INSERT INTO "api_keys" ("id", "name", "plan", "per_minute", "per_day", "prefix", "hash", "created_at",
                        "last_used_at", "revoked_at", "expires_at")
SELECT i,
       (${sqlArray(FIRST)})[1 + i % 10] || ' ' || (${sqlArray(SECOND)})[1 + (i / 10) % 10] || ' ' || i,
       (ARRAY['free', 'pro', 'business', 'enterprise'])[1 + i % 4]::"ApiKeyPlan",
       CASE WHEN i % 4 = 3 THEN 6000 END,
       CASE WHEN i % 4 = 3 THEN 5000000 END,
       'ask2_' || substr(md5('prefix ' || i), 1, 8),
       encode(sha256(convert_to('bench console key ' || i, 'UTF8')), 'hex'),
       now() - (${CONSOLE_KEYS} - i + 1) * interval '1 hour',
       now() - (i % 60) * interval '1 minute',
       CASE WHEN i % 100 < 3 THEN now() - (i % 30) * interval '1 day' END,
       CASE WHEN i % 100 BETWEEN 3 AND 4 THEN now() - (i % 20 + 1) * interval '1 day'
            WHEN i % 100 = 5 THEN now() + (i % 6 + 1) * interval '1 day'
            WHEN i % 100 >= 80 THEN now() + interval '365 days' END
FROM generate_series(1, ${CONSOLE_KEYS}) AS i;
SELECT setval(pg_get_serial_sequence('"api_keys"', 'id'), ${CONSOLE_KEYS});`;

/**
 * The usage: every key in each of the last USAGE_HOURS UTC hours (the current one included), one
 * operation an hour in turn (listPets, getPet, createPet), so 10,000 x 168 rows. Requests skewed:
 * every hundredth key a thousand times busier, and those keys refused 429 for a tenth of theirs.
 */
const USAGE_SQL = `
INSERT INTO "key_usage" ("key_id", "hour", "operation", "requests", "limited")
SELECT k, date_trunc('hour', now()) - h * interval '1 hour',
       (ARRAY['listPets', 'getPet', 'createPet'])[1 + (k + h) % 3],
       CASE WHEN k % 100 = 0 THEN 100000 + (k * 7 + h * 13) % 5000 ELSE 1 + (k * 7 + h * 13) % 200 END,
       CASE WHEN k % 100 = 0 THEN 10000 + (k + h) % 500 WHEN k % 10 = 0 THEN (k + h) % 5 ELSE 0 END
FROM generate_series(1, ${CONSOLE_KEYS}) AS k, generate_series(0, ${USAGE_HOURS - 1}) AS h`;

/**
 * The audit log, through append_audit_entry() as the service writes it (the table takes no other
 * insert): each key's creation, an update of its name, and a third of them one more change
 * (rolled, updated again or revoked), by four actors of the three kinds, in key order.
 */
const AUDIT_SQL = `
SELECT count("append_audit_entry"(
         CASE WHEN a.actor LIKE 'cli:%' THEN 'key_tool' WHEN a.actor LIKE 'system:%' THEN 'system' ELSE 'admin_token' END,
         a.actor, NULL, a.action, a.key_id, NULL, a.changes))
FROM (
  SELECT e.key_id, e.action, e.changes,
         (ARRAY['ops-alice', 'ops-bob', 'cli:carol', 'system:leak-scanner'])[1 + (e.key_id + e.n) % (CASE WHEN e.action = 'key.revoked' THEN 4 ELSE 3 END)] AS actor
  FROM generate_series(1, ${CONSOLE_KEYS}) AS k,
       LATERAL (VALUES
         (k, 1, 'key.created', jsonb_build_object('name', jsonb_build_object('before', NULL, 'after', 'key ' || k))),
         (k, 2, 'key.updated', jsonb_build_object('name', jsonb_build_object('before', 'key ' || k, 'after', 'renamed ' || k))),
         (k, 3, (ARRAY['key.rolled', 'key.updated', 'key.revoked'])[1 + k % 3], '{}'::jsonb)
       ) AS e (key_id, n, action, changes)
  WHERE e.n < 3 OR k % 3 = 0
  ORDER BY e.key_id, e.n
) AS a`;

/** Seeds the dataset into a migrated database; the time each part took, in ms. */
export async function seedConsoleData(url, log = () => {}) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const times = {};
  const timed = async (name, sql) => {
    const t0 = performance.now();
    await c.query(sql);
    times[name] = Math.round(performance.now() - t0);
    log(`console dataset: ${name} in ${times[name]} ms`);
  };
  try {
    await c.query("SET maintenance_work_mem = '256MB'");
    await timed('keys', KEYS_SQL);
    await timed('usage', USAGE_SQL);
    await timed('audit', AUDIT_SQL);
    // VACUUM sets the visibility map (index-only scans) and ANALYZE the statistics, as
    // autovacuum has on data this old; the sums the trigger keeps of key_usage included.
    await timed('vacuum', 'VACUUM (ANALYZE)');
    return times;
  } finally {
    await c.end();
  }
}
