import { createHash } from 'node:crypto';
import { Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { Clock } from '../common/clock.js';
import type { MemoryRateLimitStore } from './memory.store.js';
import { RateLimitStore } from './rate-limit.store.js';
import { ConsumeRequest, ConsumeResult, Outcome, windowReset, windowStart } from './rate-limit.windows.js';

/**
 * The decision of rate-limit.windows.ts / memory.store.ts for one request, atomically in Redis:
 * read every window's counter and the ban; if banned, answer so; if no window is exhausted,
 * count the request in every window; otherwise count a rejection for the limited period (the
 * exhausted window resetting last) and ban once rejections pass the threshold.
 * `now` comes from the caller (the app's Clock), never from Redis, so tests can move time.
 * Expiries are relative (PEXPIRE), plus a grace period for clock skew between instances.
 *
 * KEYS: n window counters, n rejection counters (same windows), the ban key.
 * ARGV: now, n, ban threshold, ban ms, grace ms, then per window: limit, reset (epoch ms).
 * Reply: {outcome (0 allowed, 1 limited, 2 banned), banned until, count per window...}.
 */
export const RATE_LIMIT_SCRIPT = `
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local banMs = tonumber(ARGV[4])
local grace = tonumber(ARGV[5])
local counts = {}
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
end
local banKey = KEYS[2 * n + 1]
local bannedUntil = tonumber(redis.call('GET', banKey) or '0')
if bannedUntil > now then
  return {2, bannedUntil, unpack(counts)}
end
local blocking = 0
local blockingReset = 0
for i = 1, n do
  local reset = tonumber(ARGV[5 + 2 * i])
  if counts[i] >= tonumber(ARGV[4 + 2 * i]) and (blocking == 0 or reset >= blockingReset) then
    blocking = i
    blockingReset = reset
  end
end
if blocking == 0 then
  for i = 1, n do
    counts[i] = redis.call('INCR', KEYS[i])
    if counts[i] == 1 then
      redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[5 + 2 * i]) - now + grace)
    end
  end
  return {0, 0, unpack(counts)}
end
local rejected = redis.call('INCR', KEYS[n + blocking])
if rejected == 1 then
  redis.call('PEXPIRE', KEYS[n + blocking], blockingReset - now + grace)
end
if rejected > threshold then
  redis.call('DEL', KEYS[n + blocking])
  bannedUntil = now + banMs
  redis.call('SET', banKey, string.format('%d', bannedUntil), 'PX', banMs + grace)
  return {2, bannedUntil, unpack(counts)}
end
return {1, 0, unpack(counts)}
`;

export const RATE_LIMIT_SCRIPT_SHA = createHash('sha1').update(RATE_LIMIT_SCRIPT).digest('hex');

/** Extra lifetime of every key beyond its window, so instances whose clocks differ agree. */
const EXPIRY_GRACE_MS = 5_000;
/** After a failed command, requests skip Redis for this long (a hung server costs one timeout, not one per request). */
const RETRY_AFTER_FAILURE_MS = 1_000;

export interface RedisStoreOptions {
  url: string;
  /** Prefix of every key (namespaces deployments and test suites). */
  prefix: string;
  commandTimeoutMs: number;
  connectTimeoutMs: number;
  /** Called on every Redis error (metrics). */
  onError?: (err: unknown) => void;
}

const OUTCOMES: Outcome[] = ['allowed', 'limited', 'banned'];

/**
 * Counters in Redis, shared by every instance: one EVALSHA per request for both windows and
 * the ban. When Redis cannot answer, requests are decided by this instance's memory store
 * instead (logged once per outage) until Redis answers again; nothing waits for Redis longer
 * than the command timeout, and commands are never queued or resent (a resent script would
 * count a request twice).
 */
export class RedisRateLimitStore extends RateLimitStore implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis;
  private sha = RATE_LIMIT_SCRIPT_SHA;
  private degraded = false;
  private started?: Promise<void>;
  private stopped?: Promise<void>;
  private skipUntil = 0;

  constructor(
    clock: Clock,
    private readonly fallback: MemoryRateLimitStore,
    private readonly options: RedisStoreOptions,
  ) {
    super(clock);
    this.redis = new Redis(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      // Commands issued in the same event-loop turn (concurrent requests) go out in one write.
      enableAutoPipelining: true,
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
    this.redis.on('ready', () => void this.loadScript());
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
      await this.loadScript();
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

  async consume(request: ConsumeRequest): Promise<ConsumeResult> {
    if (this.redis.status !== 'ready' || Date.now() < this.skipUntil) {
      if (!this.degraded) this.markDown(new Error(`connection ${this.redis.status}`));
      return this.fallback.consumeSync(request);
    }
    let reply: unknown;
    try {
      reply = await this.evaluate(request);
    } catch (err) {
      this.skipUntil = Date.now() + RETRY_AFTER_FAILURE_MS;
      this.markDown(err);
      return this.fallback.consumeSync(request);
    }
    if (this.degraded) {
      this.degraded = false;
      this.logger.log('Redis answers again: rate-limit counters are shared by all instances again');
    }
    return this.parse(request, reply);
  }

  /** The keys of one request; the hash tag keeps a subject's keys in one Redis Cluster slot. */
  keysOf(request: ConsumeRequest): string[] {
    const base = `${this.options.prefix}{${request.subject}}`;
    const starts = request.windows.map((w) => windowStart(request.nowMs, w.ttlMs));
    return [
      ...request.windows.map((w, i) => `${base}:${w.name}:${starts[i]}`),
      ...request.windows.map((w, i) => `${base}:rejected:${w.name}:${starts[i]}`),
      `${base}:ban`,
    ];
  }

  private async evaluate(request: ConsumeRequest): Promise<unknown> {
    const keys = this.keysOf(request);
    const args: (string | number)[] = [
      request.nowMs,
      request.windows.length,
      request.banThreshold,
      request.banMs,
      EXPIRY_GRACE_MS,
      ...request.windows.flatMap((w) => [w.limit, windowReset(request.nowMs, w.ttlMs)]),
    ];
    try {
      return await this.redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      // A restarted or flushed Redis has forgotten the script: EVAL runs and caches it again.
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return await this.redis.eval(RATE_LIMIT_SCRIPT, keys.length, ...keys, ...args);
    }
  }

  private async loadScript(): Promise<void> {
    try {
      this.sha = String(await this.redis.script('LOAD', RATE_LIMIT_SCRIPT));
    } catch {
      // EVALSHA answers NOSCRIPT and evaluate() falls back to EVAL.
    }
  }

  private parse(request: ConsumeRequest, reply: unknown): ConsumeResult {
    const values = (reply as (number | string)[]).map(Number);
    const outcome = OUTCOMES[values[0]];
    const result: ConsumeResult = {
      outcome,
      windows: request.windows.map((w, i) => ({ ...w, count: values[2 + i], resetMs: windowReset(request.nowMs, w.ttlMs) })),
    };
    if (outcome === 'banned') result.bannedUntilMs = values[1];
    return result;
  }

  private markDown(err: unknown): void {
    this.options.onError?.(err);
    if (this.degraded) return;
    this.degraded = true;
    const reason = err instanceof Error ? err.message : String(err);
    this.logger.warn(`Redis unavailable (${reason}): rate limits are counted per instance until it answers again`);
  }
}
