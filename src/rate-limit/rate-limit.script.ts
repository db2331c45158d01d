import { counterName } from './rate-limit.store.js';
import { ConsumeRequest, windowReset, windowStart } from './rate-limit.windows.js';
import { LEASE_HEADROOM, LEASE_MS } from './redis-leases.js';

/**
 * The decision of rate-limit.windows.ts / memory.store.ts for one request, atomically in Redis:
 * read every window's counter and the ban; if banned, answer so; if no window is exhausted,
 * count the request in every window; otherwise count a rejection in the exhausted window that
 * resets last, and ban once rejections pass the threshold.
 * `now` comes from the caller (the app's Clock), never from Redis, so tests can move time.
 *
 * Each window is one hash under a fixed name per subject: `s` its start, `c` its count, `r` the
 * rejections of its limited period; a hash whose start is not the current window's counts as
 * empty and is overwritten. So a subject holds a fixed number of keys, and eviction can be
 * steered (docs/rate-limits.md, "Redis memory"): an API key's keys never expire (`persistent`,
 * bounded by the keys issued), so no volatile-* policy can evict them; an address's counters
 * expire with their windows (plus a grace period for clock skew), and its ban a day after the
 * longest window, so under volatile-ttl a flood of fresh addresses evicts other addresses'
 * counters first.
 *
 * Leases: an allowed request may take up to `leaseMax` counts at once, which the instance then
 * spends locally (RedisRateLimitStore.consume). A lease takes at most a `headroom`-th of each
 * window's room, and leaves free at least what the subject would spend at its pace so far in
 * the window over two lease lifetimes (`leaseMs`): grant = min(leaseMax, floor(room / headroom),
 * room - reserve), with reserve = ceil(count * 2 * leaseMs / elapsed). Counts are taken before
 * they are spent, so no window ever goes over its limit; near a limit, or at a pace that would
 * reach it while a lease lasts, the grant falls to 1, which is the exact per-request decision.
 * Each window's `refund` first gives back the unspent counts of the caller's ended lease, for
 * the windows that lease was taken in.
 *
 * A ban, as it starts, is published on the ban channel (BanChannel) as `ban:<subject>`, in the
 * same atomic step: every instance listening drops its lease of the subject.
 */
export const RATE_LIMIT_SCRIPT = `
local banKey = KEYS[#KEYS]
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local banMs = tonumber(ARGV[4])
local grace = tonumber(ARGV[5])
local leaseMax = tonumber(ARGV[6])
local headroom = tonumber(ARGV[7])
local leaseMs = tonumber(ARGV[8])
local persistent = ARGV[9] == '1'
local longestWindowMs = tonumber(ARGV[10])
local channel = ARGV[11 + 4 * n]
local subject = ARGV[12 + 4 * n]
local limits, starts, resets, counts, current = {}, {}, {}, {}, {}
for i = 1, n do
  local at = 10 + 4 * (i - 1)
  limits[i] = tonumber(ARGV[at + 1])
  starts[i] = ARGV[at + 2]
  resets[i] = tonumber(ARGV[at + 3])
  local refund = tonumber(ARGV[at + 4])
  local stored = redis.call('HMGET', KEYS[i], 's', 'c')
  current[i] = stored[1] == starts[i]
  counts[i] = current[i] and tonumber(stored[2]) or 0
  if refund > 0 and counts[i] > 0 then
    counts[i] = redis.call('HINCRBY', KEYS[i], 'c', -math.min(refund, counts[i]))
  end
end

local function restart(i, count)
  redis.call('HSET', KEYS[i], 's', starts[i], 'c', count, 'r', 0)
  if not persistent then redis.call('PEXPIRE', KEYS[i], resets[i] - now + grace) end
  current[i] = true
end

local bannedUntil = tonumber(redis.call('GET', banKey) or '0')
if bannedUntil > now then
  return {2, bannedUntil, unpack(counts)}
end
local blocking = 0
for i = 1, n do
  if counts[i] >= limits[i] and (blocking == 0 or resets[i] >= resets[blocking]) then blocking = i end
end
if blocking == 0 then
  local grant = leaseMax
  for i = 1, n do
    local room = limits[i] - counts[i]
    local elapsed = math.max(now - tonumber(starts[i]), 1000)
    local reserve = math.ceil(counts[i] * 2 * leaseMs / elapsed)
    local cap = math.min(math.floor(room / headroom), room - reserve)
    if cap < grant then grant = cap end
  end
  if grant < 1 then grant = 1 end
  for i = 1, n do
    if current[i] then
      counts[i] = redis.call('HINCRBY', KEYS[i], 'c', grant)
    else
      restart(i, grant)
      counts[i] = grant
    end
  end
  return {0, grant, unpack(counts)}
end
if not current[blocking] then restart(blocking, 0) end
local rejected = redis.call('HINCRBY', KEYS[blocking], 'r', 1)
if rejected > threshold then
  redis.call('HSET', KEYS[blocking], 'r', 0)
  bannedUntil = now + banMs
  if persistent then
    redis.call('SET', banKey, string.format('%d', bannedUntil))
  else
    redis.call('SET', banKey, string.format('%d', bannedUntil), 'PX', banMs + longestWindowMs + 86400000 + grace)
  end
  if channel ~= '' then redis.call('PUBLISH', channel, 'ban:' .. subject) end
  return {3, bannedUntil, unpack(counts)}
end
return {1, 0, unpack(counts)}
`;

/**
 * A subject's counters and ban as stored, changing nothing (GET /v1/rate_limit), with the keys
 * of RATE_LIMIT_SCRIPT: the ban's end (0: none), then each window's start and count as stored
 * ('' and 0 for a window never counted). One round trip, in the subject's one slot.
 */
export const RATE_LIMIT_PEEK_SCRIPT = `
local out = {redis.call('GET', KEYS[#KEYS]) or '0'}
for i = 1, #KEYS - 1 do
  local stored = redis.call('HMGET', KEYS[i], 's', 'c')
  out[#out + 1] = stored[1] or ''
  out[#out + 1] = stored[2] or '0'
end
return out
`;

/** The scripts as commands of the connection (defineCommand), with their arguments as the store gives them. */
export interface WithRateLimitScript {
  rateLimit(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  rateLimitPeek(numberOfKeys: number, ...keys: string[]): Promise<unknown>;
}

/** Extra lifetime of every key beyond its window, so instances whose clocks differ agree. */
const EXPIRY_GRACE_MS = 5_000;

/**
 * RATE_LIMIT_SCRIPT's keys for one request: a hash per window, then the ban. The hash tag keeps
 * a subject's keys in one Redis Cluster slot.
 */
export function rateLimitKeys(prefix: string, request: ConsumeRequest): string[] {
  const base = `${prefix}{${counterName(request.subject)}}`;
  return [...request.windows.map((w) => `${base}:w:${w.name}`), `${base}:ban`];
}

/**
 * RATE_LIMIT_SCRIPT's arguments for one request: a lease of up to `leaseMax` counts asked for
 * (1: the request alone) to live `leaseMs`, per window the counts of an ended lease given back
 * (`refunds`), and the channel a ban is published on ('': none).
 */
export function rateLimitArgs(
  request: ConsumeRequest,
  leaseMax = 1,
  refunds: readonly number[] = [],
  leaseMs = LEASE_MS,
  banChannel = '',
): (string | number)[] {
  return [
    request.nowMs,
    request.windows.length,
    request.banThreshold,
    request.banMs,
    EXPIRY_GRACE_MS,
    leaseMax,
    LEASE_HEADROOM,
    leaseMs,
    // API keys' counters never expire: bounded by the keys issued, and never evicted.
    request.subject.startsWith('key:') ? 1 : 0,
    Math.max(...request.windows.map((w) => w.ttlMs)),
    ...request.windows.flatMap((w, i) => [
      w.limit,
      windowStart(request.nowMs, w.ttlMs),
      windowReset(request.nowMs, w.ttlMs),
      refunds[i] ?? 0,
    ]),
    banChannel,
    request.subject,
  ];
}
