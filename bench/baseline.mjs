// The raw baseline of `npm run bench`: the three pet operations on node:http + pg, with the
// service's SQL as named prepared statements, and nothing else: no framework, no auth, no rate
// limiter, no logging. Its statements are the service's PET_SQL text, the insert included
// (src/pets/pets.repository.ts; the bench passes the built service's text in BENCH_PET_SQL, so the
// two cannot drift).
// It answers the same shapes as the service (bare array, Link / Location headers, int64 ids
// as exact JSON numbers) so that the two do comparable work per request.
//
// Usage: DATABASE_URL=postgresql://… PORT=3601 node bench/baseline.mjs
import http from 'node:http';
import { Buffer } from 'node:buffer';
import { URL, URLSearchParams } from 'node:url';
import pg from 'pg';

const PORT = Number(process.env.PORT ?? 3601);
const HOST = process.env.HOST ?? '127.0.0.1';
const BASE = process.env.PUBLIC_BASE_URL ?? `http://localhost:${PORT}/v1`;
// The service's default pool size (DB_POOL_MAX), so both compete for the same connections, and
// its pool's setting of keeping them open (an idle server closing its connections would stall
// the queries of the server being measured meanwhile).
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_MAX ?? 10),
  idleTimeoutMillis: 0,
});
pool.on('error', () => {});

// A copy of PET_SQL for running this file by hand: each status has its own two statements,
// listAvailable and listAvailableAfter and so on.
const COLUMNS = 'SELECT "id", "name", "category_id" AS "categoryId", "status"::text AS "status" FROM "pets"';
const byStatus = (status, after) =>
  `${COLUMNS} WHERE "status" >= '${status}' AND "status" <= '${status}'${after ? ' AND "id" > $1' : ''} ORDER BY "pets"."status", "pets"."id" LIMIT $${after ? 2 : 1}`;
const statusName = (status) => status[0].toUpperCase() + status.slice(1);
const SQL = {
  list: `${COLUMNS} ORDER BY "id" LIMIT $1`,
  listAfter: `${COLUMNS} WHERE "id" > $1 ORDER BY "id" LIMIT $2`,
  ...Object.fromEntries(
    ['available', 'pending', 'sold'].flatMap((s) => [
      [`list${statusName(s)}`, byStatus(s, false)],
      [`list${statusName(s)}After`, byStatus(s, true)],
    ]),
  ),
  get: `${COLUMNS} WHERE "id" = $1`,
  insert:
    'INSERT INTO "pets" ("name", "category_id", "status", "created_at", "updated_at") VALUES ($1, $2, CAST($3::text AS "PetStatus"), $4, $5) ' +
    'RETURNING "id", "name", "category_id" AS "categoryId", "status"::text AS "status"',
  ...(process.env.BENCH_PET_SQL ? JSON.parse(process.env.BENCH_PET_SQL) : {}),
};
const run = (name, values) => pool.query({ name, text: SQL[name], values }).then((r) => r.rows);

const STATUSES = new Set(['available', 'pending', 'sold']);
const DECIMAL = /^[1-9][0-9]{0,18}$/;
const INT64_MAX = 9223372036854775807n;
const positiveInt64 = (text) => (DECIMAL.test(text) && BigInt(text) <= INT64_MAX ? text : null);

// pg returns int8 columns as decimal strings, so ids are written out exactly.
const petJson = (r) =>
  `{"id":${r.id},"name":${JSON.stringify(r.name)},"categoryId":${r.categoryId},"status":"${r.status}"}`;

function send(res, status, body, headers = {}) {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}
const fail = (res, status, code, message) => send(res, status, JSON.stringify({ code, message, status }));

async function listPets(url, res) {
  const q = url.searchParams;
  const limit = q.has('limit') ? Number(q.get('limit')) : 20;
  const status = q.get('status');
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) return fail(res, 400, 'invalid_parameter', 'bad limit');
  if (status !== null && !STATUSES.has(status)) return fail(res, 400, 'invalid_parameter', 'bad status');
  let after = null;
  if (q.has('cursor')) {
    const text = Buffer.from(q.get('cursor'), 'base64url').toString('utf8');
    after = text.startsWith('p1.') ? positiveInt64(text.slice(3)) : null;
    if (after === null) return fail(res, 400, 'invalid_parameter', 'bad cursor');
  }
  const take = String(limit + 1);
  const first = status === null ? 'list' : `list${statusName(status)}`;
  const rows = after === null ? await run(first, [take]) : await run(`${first}After`, [after, take]);
  const headers = {};
  if (rows.length > limit) {
    rows.length = limit;
    const next = new URLSearchParams({ limit: String(limit) });
    if (status !== null) next.set('status', status);
    next.set('cursor', Buffer.from(`p1.${rows[limit - 1].id}`, 'utf8').toString('base64url'));
    headers.Link = `<${BASE}/pets?${next}>; rel="next"`;
  }
  send(res, 200, `[${rows.map(petJson).join(',')}]`, headers);
}

async function createPet(req, res) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return fail(res, 400, 'malformed_json', 'bad json');
  }
  const { name, categoryId, status = 'available' } = body ?? {};
  // JSON.parse rounds integers beyond 2^53; take such a categoryId from the text instead.
  const category = Number.isSafeInteger(categoryId)
    ? String(categoryId)
    : typeof categoryId === 'number'
      ? positiveInt64(/"categoryId"\s*:\s*(\d+)/.exec(text)?.[1] ?? '')
      : null;
  if (typeof name !== 'string' || name.length < 1 || name.length > 255 || category === null || !STATUSES.has(status)) {
    return fail(res, 400, 'validation_failed', 'bad pet');
  }
  const now = new Date();
  const [row] = await run('insert', [name, category, status, now, now]);
  send(res, 201, petJson(row), { Location: `${BASE}/pets/${row.id}` });
}

// getPet is deprecated: the service adds these to each of its responses (src/deprecation/deprecation.ts).
const DEPRECATION = {
  Deprecation: '@1795305600',
  Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  Link: `<${BASE}/pets>; rel="successor-version"`,
};

async function getPet(idText, res) {
  const id = positiveInt64(idText);
  if (id === null) return fail(res, 400, 'invalid_parameter', 'bad petId');
  const [row] = await run('get', [id]);
  if (!row) return fail(res, 404, 'not_found', 'no such pet');
  send(res, 200, petJson(row), DEPRECATION);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://baseline');
  let work;
  if (url.pathname === '/v1/pets' && req.method === 'GET') work = listPets(url, res);
  else if (url.pathname === '/v1/pets' && req.method === 'POST') work = createPet(req, res);
  else if (url.pathname.startsWith('/v1/pets/') && req.method === 'GET') work = getPet(url.pathname.slice(9), res);
  else if (url.pathname === '/readyz') work = pool.query('SELECT 1').then(() => send(res, 200, '{"status":"ready"}'));
  else return fail(res, 404, 'route_not_found', 'no such route');
  work.catch(() => fail(res, 503, 'service_unavailable', 'database error'));
});
server.keepAliveTimeout = 5000;
server.listen(PORT, HOST);

const stop = () => server.close(() => pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
