import { Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { RedisTarget } from '../config/redis.config.js';
import { connectRedis, type RedisConnection } from '../redis/redis-connection.js';
import { inClientSpan } from '../tracing/tracing.js';
import type { Clock } from '../time/clock.js';
import type { MemoryRateLimitStore } from './memory.store.js';
import { counterName, RateLimitStore } from './rate-limit.store.js';
import { ConsumeRequest, ConsumeResult, Outcome, windowReset, windowStart } from './rate-limit.windows.js';

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
  return {3, bannedUntil, unpack(counts)}
end
return {1, 0, unpack(counts)}
`;

/** The script as a command of the connection (defineCommand), with its arguments as evaluate() gives them. */
interface WithRateLimitScript {
  rateLimit(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
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
 * (1: the request alone), and per window the counts of an ended lease given back (`refunds`).
 */
export function rateLimitArgs(
  request: ConsumeRequest,
  leaseMax = 1,
  refunds: readonly number[] = [],
): (string | number)[] {
  return [
    request.nowMs,
    request.windows.length,
    request.banThreshold,
    request.banMs,
    EXPIRY_GRACE_MS,
    leaseMax,
    LEASE_HEADROOM,
    LEASE_MS,
    // API keys' counters never expire: bounded by the keys issued, and never evicted.
    request.subject.startsWith('key:') ? 1 : 0,
    Math.max(...request.windows.map((w) => w.ttlMs)),
    ...request.windows.flatMap((w, i) => [
      w.limit,
      windowStart(request.nowMs, w.ttlMs),
      windowReset(request.nowMs, w.ttlMs),
      refunds[i] ?? 0,
    ]),
  ];
}

/** After a failed command, requests skip Redis for this long (a hung server costs one timeout, not one per request). */
const RETRY_AFTER_FAILURE_MS = 1_000;

/**
 * Leases (see RATE_LIMIT_SCRIPT) spare most requests of a busy key a round trip to Redis
 * (bench scenario listPetsManyKeys). A subject whose every window
 * allows at least LEASE_MIN_LIMIT takes counts ahead and spends them here, for at most
 * LEASE_MS: first 2, then twice what its last lease spent per LEASE_MS (so a lease follows the
 * subject's pace on this instance), up to LEASE_MAX, and never more than a LEASE_HEADROOM-th of
 * a window's room or more than would leave the subject's pace short of room while the lease
 * lasts. Smaller windows (the free plan's 60 a minute, an address's requests) are decided in
 * Redis request by request.
 * What a lease costs in exactness: the X-RateLimit-Remaining another instance reports counts
 * this instance's unspent counts as used (until the lease has ended and the subject next needs
 * Redis here, which gives them back), and a ban set by another instance is seen here once the
 * lease ends. No window ever admits more than its limit.
 */
export const LEASE_MAX = 64;
export const LEASE_HEADROOM = 50;
export const LEASE_MS = 5_000;
export const LEASE_MIN_LIMIT = 200;
/** What a subject without a recent lease on this instance asks for. */
const FIRST_LEASE = 2;
/** Subjects with a lease held at once; the least recently used are forgotten (their counts stay spent). */
const MAX_LEASES = 10_000;

/** Counts an instance has taken from Redis for one subject and spends locally. */
interface Lease {
  /** The windows (start, limit) the counts were taken in. */
  starts: number[];
  limits: number[];
  /** Every window's count in Redis before the lease: what others had spent. */
  base: number[];
  granted: number;
  used: number;
  /** When it was granted; it ends LEASE_MS later. */
  grantedAtMs: number;
}

export interface RedisStoreOptions {
  /** One server, a cluster or a sentinel-watched master. */
  target: RedisTarget;
  /** Prefix of every key (namespaces deployments and test suites). */
  prefix: string;
  commandTimeoutMs: number;
  connectTimeoutMs: number;
  /** Called on every Redis error (metrics). */
  onError?: (err: unknown) => void;
}

/** The script's first value: 0 allowed, 1 limited, 2 banned, 3 banned by this request. */
const OUTCOMES: Outcome[] = ['allowed', 'limited', 'banned', 'banned'];
const BAN_STARTED = 3;

/**
 * Counters in Redis, shared by every instance: at most one EVALSHA per request for both windows
 * and the ban, none while a lease lasts. When Redis cannot answer, requests are decided by this
 * instance's memory store instead (logged once per outage) until Redis answers again; nothing
 * waits for Redis longer than the command timeout, and commands are never queued or resent (a
 * resent script would count a request twice).
 */
export class RedisRateLimitStore extends RateLimitStore implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: RedisConnection;
  private degraded = false;
  private started?: Promise<void>;
  private stopped?: Promise<void>;
  private skipUntil = 0;
  /**
   * Both read with peek(), which leaves the order alone: an entry moves up when it is set (a
   * lease granted, a subject seen full), so the oldest go first, which are the ones that have
   * run out, and a read costs no reordering (bench scenario listPetsManyKeys).
   */
  private readonly leases = new LRUCache<string, Lease>({ max: MAX_LEASES });
  /** Subjects last seen with too little room for a lease, with the windows they were seen in. */
  private readonly full = new LRUCache<string, string>({ max: MAX_LEASES });
  /** Subjects whose lease request is in flight, settled when it is over (with or without a lease). */
  private readonly leasing = new Map<string, Promise<void>>();

  /** The memory store that decides while Redis cannot; made at its first use (see `fallback`). */
  private fallbackStore?: MemoryRateLimitStore;

  constructor(
    clock: Clock,
    private readonly createFallback: () => MemoryRateLimitStore,
    private readonly options: RedisStoreOptions,
  ) {
    super(clock);
    this.redis = connectRedis(options.target, {
      lazyConnect: true,
      enableOfflineQueue: false,
      // No auto-pipelining: it costs the client more per command than the writes it saves, and
      // each command waits for the replies of its whole batch (bench scenario listPetsManyKeys).
      enableAutoPipelining: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: options.commandTimeoutMs,
      connectTimeout: options.connectTimeoutMs,
      // How long disconnect() waits for the socket to close (ioredis's 2 s keeps a dead
      // connection's timer alive after shutdown).
      disconnectTimeout: 200,
      // Keep reconnecting for as long as the process lives, at most every 2 s.
      retryStrategy: (times: number) => Math.min(times * 100, 2_000),
    });
    // Without a listener ioredis prints every failed reconnection attempt.
    this.redis.on('error', (err: Error) => this.markDown(err));
    // EVALSHA, and EVAL on a connection (a cluster's node, a new master) that has not run it yet:
    // ioredis keeps track per socket, so a node that restarted or was promoted gets it again.
    this.redis.defineCommand('rateLimit', { lua: RATE_LIMIT_SCRIPT });
  }

  /**
   * Waits for the first connection, but never longer than the connect timeout. (Nest calls
   * this twice: the instance is both our RateLimitStore and ThrottlerModule's storage.)
   */
  onModuleInit(): Promise<void> {
    this.started ??= this.start();
    return this.started;
  }

  private async start(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('connect timeout')), this.options.connectTimeoutMs);
    });
    try {
      await Promise.race([this.redis.connect(), timeout]);
    } catch (err) {
      this.markDown(err);
    } finally {
      clearTimeout(timer);
    }
  }

  onModuleDestroy(): Promise<void> {
    this.stopped ??= this.stop();
    return this.stopped;
  }

  private async stop(): Promise<void> {
    if (this.redis.status === 'ready') {
      try {
        await this.redis.quit();
        return;
      } catch {
        // fall through: close the socket
      }
    }
    this.redis.disconnect();
  }

  /** Whether requests are currently decided in Redis (false while falling back to memory). */
  get shared(): boolean {
    return !this.degraded;
  }

  consume(request: ConsumeRequest): ConsumeResult | Promise<ConsumeResult> {
    const lease = this.leases.peek(request.subject);
    if (
      lease !== undefined &&
      lease.used < lease.granted &&
      request.nowMs < lease.grantedAtMs + LEASE_MS &&
      sameWindows(lease, request)
    ) {
      lease.used += 1;
      return leased(request, lease);
    }
    return this.decide(request, lease);
  }

  /**
   * The memory store for an outage, made when one first needs it: its LRUs are allocated in full
   * when made (RATE_LIMIT_MEMORY_MAX_KEYS entries each; the bench's RSS column), which an instance
   * whose Redis never fails would hold for nothing.
   */
  private get fallback(): MemoryRateLimitStore {
    return (this.fallbackStore ??= this.createFallback());
  }

  /** One script round trip: the request's decision, and a lease when there is room for one. */
  private async decide(request: ConsumeRequest, expired: Lease | undefined): Promise<ConsumeResult> {
    if (this.redis.status !== 'ready' || Date.now() < this.skipUntil) {
      if (!this.degraded) this.markDown(new Error(`connection ${this.redis.status}`));
      return this.fallback.consumeSync(request);
    }
    const { subject } = request;
    // One lease request per subject at a time: requests arriving meanwhile wait for it and
    // spend from the lease it brings, so no lease replaces another with counts unspent and a
    // burst costs one round trip, not one each. (If it brings none, near a limit, they are
    // then decided one by one.)
    // Where no lease can be had (a window too small or, last seen, too full for one), requests
    // are decided one by one in parallel, as a free key's always are.
    const leaseable = this.leaseable(request);
    const pendingLease = leaseable ? this.leasing.get(subject) : undefined;
    if (pendingLease !== undefined) {
      await pendingLease;
      return this.consume(request);
    }
    // Unspent counts of an ended lease go back to the windows it was taken in that are still
    // current; a past window has nothing to give back (its counter is gone with it).
    const refunds = expired !== undefined ? unspent(expired, request) : undefined;
    if (expired !== undefined) this.leases.delete(subject);
    let settled: (() => void) | undefined;
    if (leaseable) this.leasing.set(subject, new Promise<void>((resolve) => (settled = resolve)));
    let reply: unknown;
    try {
      reply = await this.evaluate(request, leaseable ? leaseAsk(expired, request.nowMs) : 1, refunds);
    } catch (err) {
      this.skipUntil = Date.now() + RETRY_AFTER_FAILURE_MS;
      this.markDown(err);
      return this.fallback.consumeSync(request);
    } finally {
      if (settled) {
        this.leasing.delete(subject);
        settled();
      }
    }
    if (this.degraded) {
      this.degraded = false;
      this.logger.log('Redis answers again: rate-limit counters are shared by all instances again');
    }
    return this.parse(request, reply);
  }
  /** The Redis keys of one request (rateLimitKeys under this store's prefix). */
  keysOf(request: ConsumeRequest): string[] {
    return rateLimitKeys(this.options.prefix, request);
  }

  private async evaluate(request: ConsumeRequest, leaseMax: number, refunds?: readonly number[]): Promise<unknown> {
    const keys = this.keysOf(request);
    const args = rateLimitArgs(request, leaseMax, refunds);
    return inClientSpan(
      'EVALSHA',
      { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA', 'db.query.summary': 'rate-limit script' },
      () => (this.redis as RedisConnection & WithRateLimitScript).rateLimit(keys.length, ...keys, ...args),
    );
  }

  /**
   * Whether a lease could be granted now: every window big enough for one, and not seen too
   * full for one in these windows (then requests skip waiting for a lease that cannot come).
   */
  private leaseable(request: ConsumeRequest): boolean {
    for (const w of request.windows) if (w.limit < LEASE_MIN_LIMIT) return false;
    const full = this.full.peek(request.subject);
    return full === undefined || full !== windowsKey(request);
  }

  private parse(request: ConsumeRequest, reply: unknown): ConsumeResult {
    const values = (reply as (number | string)[]).map(Number);
    const outcome = OUTCOMES[values[0]];
    const granted = outcome === 'allowed' ? values[1] : 1;
    if (granted <= 1) this.full.set(request.subject, windowsKey(request));
    else this.full.delete(request.subject);
    if (granted > 1) {
      const lease: Lease = {
        starts: request.windows.map((w) => windowStart(request.nowMs, w.ttlMs)),
        limits: request.windows.map((w) => w.limit),
        base: request.windows.map((_w, i) => values[2 + i] - granted),
        granted,
        used: 1,
        grantedAtMs: request.nowMs,
      };
      this.leases.set(request.subject, lease);
      return leased(request, lease);
    }
    const result: ConsumeResult = {
      outcome,
      windows: request.windows.map((w, i) => ({
        ...w,
        count: values[2 + i],
        resetMs: windowReset(request.nowMs, w.ttlMs),
      })),
    };
    if (outcome === 'banned') result.bannedUntilMs = values[1];
    if (values[0] === BAN_STARTED) result.banStarted = true;
    return result;
  }

  private markDown(err: unknown): void {
    this.options.onError?.(err);
    // Counts leased before the outage are forgotten; the fallback decides meanwhile.
    this.leases.clear();
    if (this.degraded) return;
    this.degraded = true;
    const reason = err instanceof Error ? err.message : String(err);
    this.logger.warn(`Redis unavailable (${reason}): rate limits are counted per instance until it answers again`);
  }
}

/** Whether a lease was taken in the request's current windows, at their current limits. */
function sameWindows(lease: Lease, request: ConsumeRequest): boolean {
  const { windows, nowMs } = request;
  if (windows.length !== lease.starts.length) return false;
  for (let i = 0; i < windows.length; i++) {
    if (lease.limits[i] !== windows[i].limit || lease.starts[i] !== windowStart(nowMs, windows[i].ttlMs)) return false;
  }
  return true;
}

/**
 * Counts to ask for after `last`: twice what it spent, scaled to a lease's lifetime by the time
 * it lasted (until spent, or until it ran out), so a subject spending fast here takes more at
 * once and a slow one holds few counts that others cannot use.
 */
function leaseAsk(last: Lease | undefined, nowMs: number): number {
  if (last === undefined) return FIRST_LEASE;
  const lastedMs = Math.max(1, Math.min(nowMs - last.grantedAtMs, LEASE_MS));
  return Math.min(LEASE_MAX, Math.max(FIRST_LEASE, Math.ceil((2 * last.used * LEASE_MS) / lastedMs)));
}

/** Per window of the request, what an ended lease did not spend when it was taken in that window, else 0. */
function unspent(lease: Lease, request: ConsumeRequest): number[] {
  const left = lease.granted - lease.used;
  const comparable = lease.starts.length === request.windows.length;
  return request.windows.map((w, i) =>
    comparable && lease.starts[i] === windowStart(request.nowMs, w.ttlMs) ? left : 0,
  );
}

/** An allowed request spending a lease: each window counts what others had, plus this instance's spent counts. */
function leased(request: ConsumeRequest, lease: Lease): ConsumeResult {
  return {
    outcome: 'allowed',
    windows: request.windows.map((w, i) => ({
      ...w,
      count: lease.base[i] + lease.used,
      resetMs: windowReset(request.nowMs, w.ttlMs),
    })),
  };
}

/** The request's current windows and limits, as one string (a window ends, the key changes). */
function windowsKey(request: ConsumeRequest): string {
  let key = '';
  for (const w of request.windows) key += `${w.limit}@${windowStart(request.nowMs, w.ttlMs)};`;
  return key;
}
