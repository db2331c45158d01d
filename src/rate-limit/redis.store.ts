import { Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { RedisTarget } from '../config/redis.config.js';
import { closeRedis, connectRedis, type RedisConnection } from '../redis/redis-connection.js';
import { inClientSpan } from '../tracing/tracing.js';
import type { Clock } from '../time/clock.js';
import type { MemoryRateLimitStore } from './memory.store.js';
import { RateLimitStore } from './rate-limit.store.js';
import { ConsumeRequest, ConsumeResult, Outcome, PeekResult, windowReset, windowStart } from './rate-limit.windows.js';
import {
  RATE_LIMIT_PEEK_SCRIPT,
  RATE_LIMIT_SCRIPT,
  rateLimitArgs,
  rateLimitKeys,
  type WithRateLimitScript,
} from './rate-limit.script.js';
import { BanChannel } from './ban-channel.js';
import { leaseAsk, leased, Leases, lifetimeIn, UNHEARD, type Lease } from './redis-leases.js';

/** After a failed command, requests skip Redis for this long (a hung server costs one timeout, not one per request). */
const RETRY_AFTER_FAILURE_MS = 1_000;

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
  private readonly leases = new Leases();
  /** Subjects whose lease request is in flight, settled when it is over (with or without a lease). */
  private readonly leasing = new Map<string, Promise<void>>();
  /** Bans as any instance starts them: each drops this instance's lease of the subject. */
  private readonly bans: BanChannel;

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
    this.redis.defineCommand('rateLimitPeek', { lua: RATE_LIMIT_PEEK_SCRIPT });
    this.bans = new BanChannel({
      target: options.target,
      name: `${options.prefix}bans`,
      connectTimeoutMs: options.connectTimeoutMs,
      publish: (channel, message) => this.redis.publish(channel, message),
      onBan: (subject) => this.leases.drop(subject),
    });
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
    await Promise.all([this.connect(), this.bans.start()]);
  }

  private async connect(): Promise<void> {
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
    await this.bans.stop();
    await closeRedis(this.redis);
  }

  /** Whether requests are currently decided in Redis (false while falling back to memory). */
  get shared(): boolean {
    return !this.degraded;
  }

  consume(request: ConsumeRequest): ConsumeResult | Promise<ConsumeResult> {
    return this.leases.spend(request, this.bans.epoch) ?? this.decide(request, this.leases.peek(request.subject));
  }

  /**
   * The subject's windows as its next request here would find them, counting nothing: from the
   * lease it would spend from (no round trip), else Redis's counters less what this instance
   * would first give back of its ended lease. While Redis cannot answer, the fallback's.
   */
  async peek(request: ConsumeRequest): Promise<PeekResult> {
    const pending = this.leases.pending(request, this.bans.epoch);
    if ('leased' in pending) {
      return {
        windows: request.windows.map((w, i) => ({
          ...w,
          count: pending.leased[i],
          resetMs: windowReset(request.nowMs, w.ttlMs),
        })),
      };
    }
    if (this.redis.status !== 'ready' || Date.now() < this.skipUntil) return this.fallback.peek(request);
    let reply: unknown;
    try {
      const keys = this.keysOf(request);
      reply = await inClientSpan(
        'EVALSHA',
        { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA', 'db.query.summary': 'rate-limit peek script' },
        () => (this.redis as RedisConnection & WithRateLimitScript).rateLimitPeek(keys.length, ...keys),
      );
    } catch (err) {
      this.skipUntil = Date.now() + RETRY_AFTER_FAILURE_MS;
      this.markDown(err);
      return this.fallback.peek(request);
    }
    const values = (reply as (string | number)[]).map(String);
    const bannedUntil = Number(values[0]);
    const windows = request.windows.map((w, i) => {
      const current = values[1 + 2 * i] === String(windowStart(request.nowMs, w.ttlMs));
      const stored = current ? Number(values[2 + 2 * i]) : 0;
      return {
        ...w,
        count: Math.max(0, stored - pending.refunds[i]),
        resetMs: windowReset(request.nowMs, w.ttlMs),
      };
    });
    return bannedUntil > request.nowMs ? { windows, bannedUntilMs: bannedUntil } : { windows };
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
    const leaseable = this.leases.leaseable(request);
    const pendingLease = leaseable ? this.leasing.get(subject) : undefined;
    if (pendingLease !== undefined) {
      await pendingLease;
      return this.consume(request);
    }
    // Unspent counts of an ended lease go back to the windows it was taken in that are still
    // current; a past window has nothing to give back (its counter is gone with it).
    const refunds = expired !== undefined ? this.leases.end(expired, request) : undefined;
    let settled: (() => void) | undefined;
    if (leaseable) this.leasing.set(subject, new Promise<void>((resolve) => (settled = resolve)));
    // A lease lives long when the ban channel is heard now and no ban arrived while it was asked
    // for (the ban may have come after the script ran: the lease would predate it).
    const epoch = this.bans.epoch;
    const lifetimeMs = lifetimeIn(epoch);
    const bansBefore = this.bans.bansHeard;
    let reply: unknown;
    try {
      const ask = leaseable ? leaseAsk(expired, request.nowMs, epoch) : 1;
      reply = await this.evaluate(request, ask, refunds, lifetimeMs);
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
    return this.parse(request, reply, this.bans.bansHeard === bansBefore ? epoch : UNHEARD);
  }
  /** The Redis keys of one request (rateLimitKeys under this store's prefix). */
  keysOf(request: ConsumeRequest): string[] {
    return rateLimitKeys(this.options.prefix, request);
  }

  private async evaluate(
    request: ConsumeRequest,
    leaseMax: number,
    refunds: readonly number[] | undefined,
    leaseMs: number,
  ): Promise<unknown> {
    const keys = this.keysOf(request);
    const args = rateLimitArgs(request, leaseMax, refunds, leaseMs, this.bans.name);
    return inClientSpan(
      'EVALSHA',
      { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA', 'db.query.summary': 'rate-limit script' },
      () => (this.redis as RedisConnection & WithRateLimitScript).rateLimit(keys.length, ...keys, ...args),
    );
  }

  private parse(request: ConsumeRequest, reply: unknown, epoch: number): ConsumeResult {
    const values = (reply as (number | string)[]).map(Number);
    const outcome = OUTCOMES[values[0]];
    const granted = outcome === 'allowed' ? values[1] : 1;
    const lease = this.leases.granted(request, granted, values.slice(2), epoch);
    if (lease !== undefined) return leased(request, lease);
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
