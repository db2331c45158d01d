import { Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../time/clock.js';
import { CACHE_MAX } from './api-key-cache.js';
import type { ApiKeysService, StoredApiKey } from '../api-keys/api-keys.service.js';

/** `last_used_at` is written at most this often per key and instance. */
export const TOUCH_INTERVAL_MS = 60_000;
/** How long a key's use waits to be written with the others due: one statement and one commit for all. */
export const TOUCH_BATCH_MS = 1_000;
/** Keys per statement; more due at once are written in several. */
export const TOUCH_BATCH_MAX = 1_000;

/**
 * Records keys in use in `last_used_at`, at most once a minute per key and instance, in batches:
 * the uses due within TOUCH_BATCH_MS go to the database in one statement, so many keys each seen
 * now and then cost one write a second, not one each that holds a pool connection for its commit
 * (bench scenario listPetsManyKeys, p99 at the fixed rate).
 */
export class LastUsedTimes {
  private readonly logger = new Logger('Auth');
  /**
   * When each key was last recorded in use. Read with peek(), which leaves the order alone: a
   * key moves up when it is recorded again (once a minute while in use), so the least recently
   * recorded go first, and a read costs no reordering (bench scenario listPetsManyKeys).
   */
  private readonly lastTouched = new LRUCache<string, number>({ max: CACHE_MAX });
  /** Uses not written yet, by key id. */
  private due = new Map<bigint, Date>();
  private timer?: NodeJS.Timeout;
  /** The write under way, if any. */
  private writing?: Promise<void>;

  constructor(
    private readonly keys: Pick<ApiKeysService, 'touch'>,
    private readonly clock: Clock,
  ) {}

  /** Records use in `last_used_at`, at most once a minute per key; never delays the request. */
  record(stored: StoredApiKey): void {
    const id = stored.id.toString();
    const now = this.clock.now().getTime();
    const last = this.lastTouched.peek(id) ?? stored.lastUsedAt?.getTime() ?? 0;
    if (now - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(id, now);
    this.due.set(stored.id, new Date(now));
    this.timer ??= setTimeout(() => void this.flush(), TOUCH_BATCH_MS).unref();
  }

  /**
   * Writes the uses due now, after a write under way; settles when they are written or the
   * failure is logged (a use that fails to be written is recorded again at the key's next use
   * after TOUCH_INTERVAL_MS). Shutdown waits for it.
   */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing !== undefined) await this.writing;
    if (this.due.size === 0) return;
    const uses = this.due;
    this.due = new Map();
    this.writing = this.write(uses).finally(() => (this.writing = undefined));
    await this.writing;
  }

  private async write(uses: Map<bigint, Date>): Promise<void> {
    const entries = [...uses];
    for (let i = 0; i < entries.length; i += TOUCH_BATCH_MAX) {
      const batch = entries.slice(i, i + TOUCH_BATCH_MAX);
      try {
        await this.keys.touch(new Map(batch));
      } catch (err) {
        this.logger.warn(
          `could not record the last use of ${batch.length} API key(s) (ids ${batch[0][0]}…): ${(err as Error)?.message ?? err}`,
        );
      }
    }
  }
}
