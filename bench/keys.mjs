// The bench's API keys: one enterprise key, issued by the service's own key tool, for the
// scenarios of one client; and many keys on the fixed plans for listPetsManyKeys, generated with
// the built service's own functions and stored with one INSERT (a tool process per key would
// take minutes).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { API_KEY_CHECKSUM_SECRET, API_KEY_PEPPER, DIST, METRICS_TOKEN, RUN_ID, distModule } from './settings.mjs';
import { issueUnlimitedKey } from './pg-admin.mjs';

/** An enterprise key with limits far above what a run can use, when the service has the tool. */
export function issueKey(env) {
  const cli = path.join(DIST, 'cli/apikey.js');
  if (!existsSync(cli)) return null;
  return issueUnlimitedKey(cli, `bench ${RUN_ID}`, { METRICS_TOKEN, API_KEY_CHECKSUM_SECRET, API_KEY_PEPPER, ...env });
}

export const MANY_KEYS = 2000;
const FIXED_PLANS = ['free', 'pro', 'business'];

/**
 * MANY_KEYS keys, a third on each fixed plan, each with a client address of its own
 * (10.x.y.z), and the SQL that stores them: v2 keys signed with the bench's checksum secret,
 * hashed with its pepper, as the service's ApiKeysService issues them.
 */
export async function manyKeys(count = MANY_KEYS) {
  const { generateApiKey, hashApiKey, displayPrefix } = await distModule('api-keys/api-key-format.js');
  const { PLAN_LIMITS } = await distModule('api-keys/plans.js');
  const keys = [];
  for (let i = 0; i < count; i++) {
    const plan = FIXED_PLANS[i % FIXED_PLANS.length];
    const key = generateApiKey(API_KEY_CHECKSUM_SECRET);
    const n = i + 1;
    keys.push({
      key,
      plan,
      perMinute: PLAN_LIMITS[plan].perMinute,
      perDay: PLAN_LIMITS[plan].perDay,
      address: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
      row: `('bench ${RUN_ID} ${n}', '${plan}', '${displayPrefix(key)}', '${hashApiKey(key, API_KEY_PEPPER)}')`,
    });
  }
  // Literal values (the bench's own, no quotes in them), so the same text runs on PGlite's exec.
  const sql = `\nINSERT INTO "api_keys" ("name", "plan", "prefix", "hash") VALUES\n${keys.map((k) => k.row).join(',\n')};`;
  return { keys, sql };
}

const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));

/** The headers of a request sent with `k`: its key, from its own client address. */
const headersOf = (k) => ({ authorization: `Bearer ${k.key}`, 'x-forwarded-for': k.address });

/**
 * The setupRequest (autocannon's and bench/paced.mjs's) for many keys: each request takes a key with probability
 * proportional to its plan's per-minute limit, so every key runs at the same fraction of its
 * limit, and sends the key's address as X-Forwarded-For. A table with each key repeated by its
 * weight makes the draw one random index.
 */
export function keyPicker(keys) {
  const unit = keys.map((k) => k.perMinute).reduce(gcd);
  const table = [];
  for (const k of keys) {
    const headers = headersOf(k);
    for (let w = k.perMinute / unit; w > 0; w--) table.push(headers);
  }
  return (req) => ({ ...req, headers: { ...req.headers, ...table[Math.floor(Math.random() * table.length)] } });
}

/**
 * A setupRequest that sends the keys in turn, each from its address: the first `keys.length`
 * requests carry every key once (the first sight of each, before a fixed-rate phase that no
 * capacity phase came before).
 */
export function keysInTurn(keys) {
  const headers = keys.map(headersOf);
  let next = 0;
  return (req) => ({ ...req, headers: { ...req.headers, ...headers[next++ % headers.length] } });
}

/**
 * The highest share of a limit any key can reach when the server answers `reqPerSec` in all:
 * per minute (the same share for every key, by the draw's weights) and per day over
 * `totalRequests` (the free plan's, whose day is shortest relative to its minute).
 */
export function keyHeadroom(keys, { reqPerSec, totalRequests }) {
  const sumPerMinute = keys.reduce((a, k) => a + k.perMinute, 0);
  const perMinuteShare = (reqPerSec * 60) / sumPerMinute;
  const perDayShare = Math.max(...keys.map((k) => (totalRequests * k.perMinute) / sumPerMinute / k.perDay));
  return { perMinuteShare, perDayShare };
}
