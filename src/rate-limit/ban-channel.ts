import { randomUUID } from 'node:crypto';
import type { RedisTarget } from '../config/redis.config.js';
import { closeRedis, connectRedis, type RedisConnection } from '../redis/redis-connection.js';
import { UNHEARD } from './redis-leases.js';

/** How often each instance publishes its heartbeat on the channel. */
export const HEARTBEAT_MS = 1_000;
/** The channel counts as heard while this instance's own last heartbeat came back this recently. */
export const HEARD_WITHIN_MS = 2_500;

export interface BanChannelOptions {
  target: RedisTarget;
  /** The channel's name (under the store's key prefix, so deployments sharing a Redis stay apart). */
  name: string;
  connectTimeoutMs: number;
  /** Publishes on the channel (the store's command connection). */
  publish: (channel: string, message: string) => Promise<unknown>;
  /** A subject banned by any instance. */
  onBan: (subject: string) => void;
}

/**
 * The channel on which the rate-limit script announces each ban as it starts (`ban:<subject>`),
 * listened to by every instance so that a ban reaches leases at once (redis-leases.ts).
 *
 * Pub/sub delivers at most once and says nothing when a message is lost (a reconnection, a
 * failover, a silently dead socket), so the channel is trusted only while it is seen working
 * end to end: every HEARTBEAT_MS this instance publishes a heartbeat of its own on it, and the
 * channel is heard while that heartbeat came back within HEARD_WITHIN_MS. Each time it stops
 * being heard, the `epoch` moves on: a lease granted in an earlier epoch lives only the short
 * lifetime, since a ban may have been missed meanwhile.
 */
export class BanChannel {
  private readonly subscriber: RedisConnection;
  private readonly heartbeat = `heartbeat:${randomUUID()}`;
  private timer?: NodeJS.Timeout;
  private heardAt = 0;
  private heard = false;
  private currentEpoch = 0;
  /** Settles start() once the first heartbeat came back. */
  private firstHeard?: () => void;
  /** Bans heard so far: a lease granted while one arrived may predate it (see RedisRateLimitStore). */
  bansHeard = 0;

  constructor(private readonly options: BanChannelOptions) {
    this.subscriber = connectRedis(options.target, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: options.connectTimeoutMs,
      connectionName: options.name,
      disconnectTimeout: 200,
      retryStrategy: (times: number) => Math.min(times * 100, 2_000),
    });
    this.subscriber.on('error', () => this.lost());
    this.subscriber.on('close', () => this.lost());
    // (Re)subscribes on every connection: a reconnected socket, a new master, a cluster's new node.
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(options.name).then(
        () => this.beat(),
        () => this.lost(),
      );
    });
    // Subscribed to this one channel only: every message is the channel's.
    this.subscriber.on('message', (_channel: string, message: string) => this.message(message));
  }

  /** The channel's name. */
  get name(): string {
    return this.options.name;
  }

  /** The current epoch while the channel is heard, else UNHEARD. */
  get epoch(): number {
    return this.heard ? this.currentEpoch : UNHEARD;
  }

  /** Connects and starts the heartbeat; resolves once the first heartbeat came back, or after the connect timeout. */
  async start(): Promise<void> {
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.timer.unref();
    const firstHeard = new Promise<void>((resolve) => {
      const timeout = setTimeout(done, this.options.connectTimeoutMs);
      function done() {
        clearTimeout(timeout);
        resolve();
      }
      this.firstHeard = done;
    });
    await this.subscriber.connect().catch(() => this.lost());
    await firstHeard;
    this.firstHeard = undefined;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.lost();
    await closeRedis(this.subscriber);
  }

  /** Publishes the heartbeat, and stops trusting the channel when the last one is overdue. */
  private beat(): void {
    if (this.heard && Date.now() - this.heardAt > HEARD_WITHIN_MS) this.lost();
    this.options.publish(this.options.name, this.heartbeat).catch(() => this.lost());
  }

  private message(message: string): void {
    if (message === this.heartbeat) {
      this.heardAt = Date.now();
      this.heard = true;
      this.firstHeard?.();
    } else if (message.startsWith('ban:')) {
      this.bansHeard += 1;
      this.options.onBan(message.slice(4));
    }
  }

  /** The channel may have dropped messages: leases granted until now live the short lifetime. */
  private lost(): void {
    if (!this.heard) return;
    this.heard = false;
    this.currentEpoch += 1;
  }
}
