import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { usageConfig, type UsageConfig } from '../config/usage.config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { Clock } from '../time/clock.js';
import { KeyUsageRepository, PURGE_BATCH } from './key-usage.repository.js';
import { UsageCounts, type UsageOperation, type UsageRow } from './usage-counts.js';

/** Hours past their retention are deleted this often (as expired Idempotency-Keys are). */
export const PURGE_INTERVAL_MS = 10 * 60_000;
const DAY_MS = 86_400_000;

/**
 * Usage per key, UTC hour and operation (docs/operations.md, "Usage per key"): every request counted against
 * a key's rate limits is recorded here by admission, in memory (UsageCounts: no I/O, no timer and
 * no promise per request), and written every USAGE_FLUSH_MS in one statement that adds this
 * instance's counts to the rows of every instance (KeyUsageRepository.add).
 *
 * - A write that fails puts its counts back; they go with the next one. Readiness does not depend
 *   on it.
 * - On shutdown (after the drain, before the database closes: Nest runs every
 *   beforeApplicationShutdown hook before any onApplicationShutdown) the counts still held are
 *   written, so every request answered before a graceful stop is in the table. A process killed
 *   without SIGTERM loses what it counted since its last write: at most USAGE_FLUSH_MS of requests.
 * - Rows older than USAGE_RETENTION_DAYS are deleted in batches of PURGE_BATCH.
 */
@Injectable()
export class UsageRecorder implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Usage');
  private readonly counts = new UsageCounts();
  private flushTimer?: NodeJS.Timeout;
  private purgeTimer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private purging?: Promise<unknown>;
  private stopping = false;
  /** When the counts were last found written (a write that succeeded, or nothing to write). */
  private lastFlushedMs: number;

  constructor(
    private readonly repository: KeyUsageRepository,
    private readonly clock: Clock,
    @Inject(usageConfig.token) private readonly config: UsageConfig,
    private readonly metrics: MetricsService,
  ) {
    this.lastFlushedMs = clock.now().getTime();
    metrics.usageFlushLag(() => this.lagSeconds());
  }

  /** Counts one request of `operation` against a key at `nowMs`; `limited`: it is answered 429. */
  record(keyId: string, operation: UsageOperation, nowMs: number, limited: boolean): void {
    this.counts.record(keyId, operation, nowMs, limited);
  }

  /** Seconds since the counts were last written (0 right after a flush). */
  lagSeconds(): number {
    return Math.max(0, this.clock.now().getTime() - this.lastFlushedMs) / 1000;
  }

  /**
   * Writes every count held, in one statement; one write at a time (a call while one is under
   * way waits for it and then writes what was counted meanwhile). Never throws: a failed write
   * puts its counts back. Resolves whether everything taken was written.
   */
  async flush(): Promise<boolean> {
    while (this.flushing) await this.flushing;
    let written = false;
    this.flushing = this.write().then((ok) => {
      written = ok;
    });
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
    return written;
  }

  private async write(): Promise<boolean> {
    const rows = this.counts.take();
    if (rows.length === 0) {
      this.lastFlushedMs = this.clock.now().getTime();
      return true;
    }
    try {
      await this.repository.add(rows);
    } catch (err) {
      this.counts.restore(rows);
      this.metrics.usageFlushFailed();
      this.logger.warn(
        `could not write usage (${rows.length} key-hours, kept for the next flush): ${(err as Error)?.message ?? err}`,
      );
      return false;
    }
    this.lastFlushedMs = this.clock.now().getTime();
    this.metrics.usageFlushed(rows.length, totalRequests(rows));
    return true;
  }

  /**
   * Deletes every row of an hour that began USAGE_RETENTION_DAYS or more before `now`, in batches
   * of PURGE_BATCH until a batch finds fewer; how many rows this call deleted.
   */
  async purgeExpired(now: Date = this.clock.now()): Promise<number> {
    const before = new Date(now.getTime() - this.config.usageRetentionDays * DAY_MS);
    let total = 0;
    for (;;) {
      const deleted = await this.repository.deleteBeforeBatch(before);
      total += deleted;
      if (deleted < PURGE_BATCH || this.stopping) return total;
    }
  }

  onApplicationBootstrap(): void {
    // unref: neither timer keeps the process alive. Every instance purges; SKIP LOCKED keeps
    // their batches apart.
    this.flushTimer = setInterval(() => void this.flush(), this.config.usageFlushMs).unref();
    this.purgeTimer = setInterval(() => void this.purgeInBackground(), PURGE_INTERVAL_MS).unref();
  }

  /** The last write, after the drain and before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.purgeTimer);
    this.stopping = true; // a purge in progress ends after its current batch
    if (!(await this.flush())) {
      const rows = this.counts.take();
      this.logger.error(
        `usage of ${totalRequests(rows)} request(s) in ${rows.length} key-hour(s) could not be written before exit`,
      );
    }
    await this.purging;
  }

  private purgeInBackground(): Promise<unknown> {
    this.purging ??= this.purgeExpired()
      .then((n) => n > 0 && this.logger.log(`deleted ${n} usage rows past USAGE_RETENTION_DAYS`))
      .catch((err: unknown) => this.logger.warn(`could not delete old usage rows: ${(err as Error)?.message ?? err}`))
      .finally(() => (this.purging = undefined));
    return this.purging;
  }
}

function totalRequests(rows: readonly UsageRow[]): number {
  let n = 0;
  for (const row of rows) n += row.requests;
  return n;
}
