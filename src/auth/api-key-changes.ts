import { Logger } from '@nestjs/common';
import { cacheClock, type ApiKeyCache } from './api-key-cache.js';
import type { ApiKeysService } from '../api-keys/api-keys.service.js';

/**
 * How far back each poll of changed keys looks before the previous poll's instant: a change is
 * stamped when its statement starts and seen once it commits, which this covers with room.
 */
const CHANGE_OVERLAP_MS = 10_000;

/**
 * Keeps an ApiKeyCache in step with changes made by any process (docs/api-keys.md, "Revocation
 * and the cache"): every API_KEY_CACHE_TTL_MS / 2 it asks the database for the keys changed since
 * its last poll (rolled, re-planned, revoked) and drops those, then confirms the cache.
 */
export class ApiKeyChangePoller {
  private readonly logger = new Logger('Auth');
  /** The database instant the next poll asks for changes after; null until the first poll. */
  private since: Date | null = null;
  /** Changes already applied, by hash: a poll's overlap sees them again. */
  private readonly appliedChanges = new Map<string, number>();
  private pollTimer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private pollFailing = false;

  constructor(
    private readonly keys: Pick<ApiKeysService, 'changesSince'>,
    private readonly cache: ApiKeyCache,
  ) {}

  /** Polls every `ttlMs / 2` (nothing when the cache is off, `ttlMs` 0). */
  start(ttlMs: number): void {
    if (ttlMs === 0) return;
    this.pollTimer = setInterval(
      () => {
        if (this.polling === undefined) void this.pollChanges();
      },
      Math.max(1, Math.floor(ttlMs / 2)),
    );
    this.pollTimer.unref();
  }

  /** Stops polling; settles when a poll under way has. */
  async stop(): Promise<void> {
    clearInterval(this.pollTimer);
    await this.polling;
  }

  /**
   * Asks for the keys changed since the last poll and drops them from the cache; then every
   * cached outcome counts as fresh as of this poll's start. The first poll only learns the
   * database's clock. A failing poll confirms nothing, so the cache runs out within the TTL.
   * Polls run one at a time: one asked for while another runs starts after it, so an earlier
   * poll never answers last and takes the cache's freshness back to its older start.
   */
  async pollChanges(): Promise<void> {
    while (this.polling !== undefined) await this.polling;
    const poll = this.poll();
    this.polling = poll;
    try {
      await poll;
    } finally {
      this.polling = undefined;
    }
  }

  private async poll(): Promise<void> {
    const started = cacheClock.now();
    try {
      const { now, changes } = await this.keys.changesSince(this.since);
      if (this.since !== null) {
        for (const { hashes, changedAt } of changes) {
          for (const hash of hashes) {
            if (this.appliedChanges.get(hash) === changedAt.getTime()) continue;
            this.appliedChanges.set(hash, changedAt.getTime());
            this.cache.forget(hash);
          }
        }
        this.cache.confirm(started);
      }
      this.since = new Date(now.getTime() - CHANGE_OVERLAP_MS);
      for (const [hash, changedAt] of this.appliedChanges)
        if (changedAt <= this.since.getTime()) this.appliedChanges.delete(hash);
      if (this.pollFailing) this.logger.log('polling changed API keys again; cached keys are kept once more');
      this.pollFailing = false;
    } catch (err) {
      if (!this.pollFailing) {
        this.logger.warn(
          `could not poll changed API keys (cached keys now expire within API_KEY_CACHE_TTL_MS): ${(err as Error)?.message ?? err}`,
        );
      }
      this.pollFailing = true;
    }
  }
}
