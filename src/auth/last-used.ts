import { Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../time/clock.js';
import { CACHE_MAX } from './api-key-cache.js';
import type { ApiKeysService, StoredApiKey } from '../api-keys/api-keys.service.js';

/** `last_used_at` is written at most this often per key and instance. */
export const TOUCH_INTERVAL_MS = 60_000;

/** Records keys in use in `last_used_at`, at most once a minute per key and instance. */
export class LastUsedTimes {
  private readonly logger = new Logger('Auth');
  /**
   * When each key was last recorded in use. Read with peek(), which leaves the order alone: a
   * key moves up when it is recorded again (once a minute while in use), so the least recently
   * recorded go first, and a read costs no reordering (bench scenario listPetsManyKeys).
   */
  private readonly lastTouched = new LRUCache<string, number>({ max: CACHE_MAX });
  private readonly touches = new Set<Promise<void>>();

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
    const done = this.keys
      .touch(stored.id)
      .catch((err: unknown) =>
        this.logger.warn(`could not record use of API key ${id}: ${(err as Error)?.message ?? err}`),
      )
      .finally(() => this.touches.delete(done));
    this.touches.add(done);
  }

  /** The records under way (shutdown waits for them). */
  pending(): Promise<void>[] {
    return [...this.touches];
  }
}
