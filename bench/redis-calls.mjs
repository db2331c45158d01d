// CPU per rate-limit decision in Redis, with and without ioredis's auto-pipelining: the service's
// own script (RATE_LIMIT_SCRIPT, src/rate-limit/rate-limit.script.ts) called as the store calls it, for
// 2,000 subjects, by 1, 4, 16 and 64 callers at once (each sends its next call when its reply
// comes, as requests of concurrent clients do). Prints, per setting, the calls a second, this
// process's CPU per call (ioredis, the socket) and Redis's own CPU per call (INFO cpu), medians
// of alternating rounds. The many-keys scenario decides about a third of its requests this way.
//
//   node bench/redis-calls.mjs           needs Redis on BENCH_REDIS_URL (redis://127.0.0.1:6379)
//                                        and the build in .tmp/bench-dist (npm run bench makes it)
import { Redis } from 'ioredis';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { median, fmt } from './report.mjs';
import { deleteRedisKeysUnder } from './setup.mjs';
import { DIST, REDIS_URL, distModule } from './settings.mjs';

const CALLS = 20_000;
const ROUNDS = 5;
const SUBJECTS = 2_000;
const CONCURRENCY = [1, 4, 16, 64];
const PREFIX = `bench-redis-calls-${process.pid}:`;

if (!existsSync(path.join(DIST, 'rate-limit/rate-limit.script.js')))
  throw new Error(`no build in ${DIST}: run npm run bench once (or BENCH_ONLY=listPets npm run bench)`);
const { RATE_LIMIT_SCRIPT, rateLimitArgs, rateLimitKeys } = await distModule('rate-limit/rate-limit.script.js');

/** A connection with the store's options but for auto-pipelining. */
async function connect(autoPipelining) {
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    enableAutoPipelining: autoPipelining,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: 1_000,
  });
  await redis.connect();
  redis.defineCommand('rateLimit', { lua: RATE_LIMIT_SCRIPT });
  return redis;
}

/** One API key's request, decided exactly (no lease) in a minute and a day window with room. */
function decide(redis, n, nowMs) {
  const request = {
    subject: `key:${n % SUBJECTS}`,
    nowMs,
    windows: [
      { name: 'minute', ttlMs: 60_000, limit: 1e9 },
      { name: 'day', ttlMs: 86_400_000, limit: 1e9 },
    ],
    banThreshold: 10,
    banMs: 60_000,
  };
  const keys = rateLimitKeys(PREFIX, request);
  return redis.rateLimit(keys.length, ...keys, ...rateLimitArgs(request));
}

async function redisCpuMs(admin) {
  const info = await admin.info('cpu');
  const field = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)[1]);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
}

async function round(redis, admin, concurrency) {
  let sent = 0;
  const nowMs = Date.now();
  const caller = async () => {
    while (sent < CALLS) await decide(redis, sent++, nowMs);
  };
  const server0 = await redisCpuMs(admin);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, caller));
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const server = (await redisCpuMs(admin)) - server0;
  return {
    perSecond: (CALLS / elapsed) * 1000,
    clientUs: (cpu.user + cpu.system) / CALLS,
    redisUs: (server * 1000) / CALLS,
  };
}

const admin = await connect(false);
const modes = [
  ['auto-pipelining', await connect(true)],
  ['one write per call', await connect(false)],
];
try {
  for (const [, redis] of modes) await round(redis, admin, 16); // warm-up
  console.log('| callers | setting | calls/s | client CPU µs/call | Redis CPU µs/call |');
  console.log('|--:|---|--:|--:|--:|');
  for (const concurrency of CONCURRENCY) {
    const results = new Map(modes.map(([name]) => [name, []]));
    for (let r = 0; r < ROUNDS; r++)
      for (const [name, redis] of r % 2 === 0 ? modes : [...modes].reverse())
        results.get(name).push(await round(redis, admin, concurrency));
    for (const [name, rounds] of results) {
      const m = (key) => median(rounds.map((x) => x[key]));
      console.log(
        `| ${concurrency} | ${name} | ${fmt(m('perSecond'))} | ${m('clientUs').toFixed(1)} | ${m('redisUs').toFixed(1)} |`,
      );
    }
  }
} finally {
  await deleteRedisKeysUnder(PREFIX);
  await Promise.all([admin, ...modes.map(([, connection]) => connection)].map((c) => c.quit()));
}
