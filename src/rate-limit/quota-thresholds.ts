import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { KEY_EVENTS, type KeyEventSink } from '../api-keys/key-events.js';
import { Clock } from '../time/clock.js';
import { QUOTA_WINDOW, QuotaCrossings, type QuotaCrossing } from './quota-crossings.js';
import { QuotaNoticesRepository } from './quota-notices.repository.js';
import type { WindowState } from './rate-limit.windows.js';

/** How often each instance hands the crossings it saw to the webhook queue (and once more on shutdown). */
export const THRESHOLD_FLUSH_MS = 5_000;

const EVENT = 'key.quota_threshold';

/**
 * `key.quota_threshold` (docs/webhooks.md): a key's day window reaching 80% and 100% of its limit,
 * each announced once per key and UTC day. Admission shows it every key's counts after a request
 * (`see`: no I/O, QuotaCrossings); every THRESHOLD_FLUSH_MS, and on shutdown, the crossings seen
 * are recorded in key_quota_notices and announced through the KeyEventSink in one transaction:
 * a notice already recorded (by another instance, or by this one before a restart) announces
 * nothing, and a transaction that fails keeps its crossings for the next flush. Nothing is
 * recorded while no enabled endpoint subscribes to the event (the embedded database has none).
 * A process killed without SIGTERM loses what it saw since its last flush; the key's next request
 * at or past the threshold, on any instance, is seen again.
 */
@Injectable()
export class QuotaThresholds implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly crossings = new QuotaCrossings();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(
    private readonly repository: QuotaNoticesRepository,
    private readonly clock: Clock,
    @Optional() @Inject(KEY_EVENTS) private readonly events: KeyEventSink | null = null,
  ) {}

  /** A key's windows after one of its requests was counted. */
  see(keyId: string, windows: readonly WindowState[]): void {
    this.crossings.see(keyId, windows);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.flush(), THRESHOLD_FLUSH_MS).unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** Records and announces the crossings held; one flush at a time. Never throws. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.flushing = this.write().finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  private async write(): Promise<void> {
    if (this.crossings.isEmpty) return;
    const taken = this.crossings.take(this.clock.now().getTime());
    const events = this.events;
    try {
      if (!events || !(await events.subscribes(EVENT))) {
        this.crossings.forget(taken);
        return;
      }
      await this.repository.transaction(async (tx) => {
        for (const c of await this.repository.record(taken, tx)) {
          await events.announce(tx, { type: EVENT, data: eventData(c) });
        }
      });
    } catch (err) {
      this.crossings.restore(taken);
      this.logger.warn(
        `could not announce ${taken.length} quota threshold(s), kept for the next flush: ${(err as Error)?.message ?? err}`,
      );
    }
  }
}

function eventData(c: QuotaCrossing) {
  return { keyId: c.keyId, window: QUOTA_WINDOW, limit: c.limit, used: c.used, threshold: c.threshold };
}
