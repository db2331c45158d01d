import { LRUCache } from 'lru-cache';
import { CACHE_MAX } from './api-key-cache.js';

/** Lookups of never-found keys waiting for a connection, beyond which more are refused (503) at once. */
const UNKNOWN_LOOKUP_QUEUE = 100;

/** Failed lookups of one address in one UTC minute. */
export interface AddressFailures {
  minute: number;
  count: number;
}

/**
 * The budgets of lookups of credentials an instance has never found (docs/api-keys.md,
 * "Verification"; version 1 API keys and admin tokens each have their own): failed lookups per
 * address and UTC minute, failed lookups per second for the whole instance (a token bucket), and
 * how many run at once (a semaphore over part of the pool). A budget is checked when a lookup
 * starts and charged when it fails, so a valid credential costs none.
 */
export class GuessBudgets {
  /** Failed lookups of never-found credentials per address, in the current minute. */
  private readonly failuresByAddress = new LRUCache<string, AddressFailures>({ max: CACHE_MAX });
  private readonly failedLookups: TokenBucket;
  private readonly unknownLookupSlots: Semaphore;

  constructor(
    private readonly failedPerAddressPerMinute: number,
    failedPerSecond: number,
    concurrent: number,
  ) {
    this.failedLookups = new TokenBucket(failedPerSecond);
    this.unknownLookupSlots = new Semaphore(concurrent, UNKNOWN_LOOKUP_QUEUE);
  }

  /** Runs a guess's lookup in its turn; rejects with `busy()` at once when the queue is full. */
  run<T>(task: () => Promise<T>, busy: () => Error): Promise<T> {
    return this.unknownLookupSlots.run(task, busy);
  }

  /**
   * Whether a lookup from `address` may start at `nowMs`: the address's failures this minute to
   * charge should it fail, or the budget that refuses it.
   */
  check(address: string, nowMs: number): AddressFailures | 'address_budget' | 'instance_budget' {
    const minute = Math.floor(nowMs / 60_000);
    let failures = this.failuresByAddress.get(address);
    if (failures === undefined || failures.minute !== minute) {
      failures = { minute, count: 0 };
      this.failuresByAddress.set(address, failures);
    }
    if (failures.count >= this.failedPerAddressPerMinute) return 'address_budget';
    if (!this.failedLookups.available(nowMs)) return 'instance_budget';
    return failures;
  }

  /**
   * Charges a failed lookup to its address and to the instance; true when this one spent the
   * address's budget for the minute (its next guesses are refused without a lookup).
   */
  charge(failures: AddressFailures): boolean {
    failures.count += 1;
    this.failedLookups.spend();
    return failures.count === this.failedPerAddressPerMinute;
  }
}

/**
 * A budget of `perSecond` events per second, in bursts of up to `perSecond`, refilled by the
 * caller's clock. Spending is allowed into debt (events that were already under way), which
 * later refills pay back first.
 */
class TokenBucket {
  private tokens: number;
  private lastMs?: number;

  constructor(private readonly perSecond: number) {
    this.tokens = perSecond;
  }

  available(nowMs: number): boolean {
    if (this.lastMs !== undefined && nowMs > this.lastMs) {
      this.tokens = Math.min(this.perSecond, this.tokens + ((nowMs - this.lastMs) * this.perSecond) / 1000);
    }
    this.lastMs = nowMs;
    return this.tokens >= 1;
  }

  spend(): void {
    this.tokens -= 1;
  }
}

/**
 * At most `limit` tasks at once; up to `queue` more wait their turn, and beyond that run()
 * rejects at once with `busy()`, so a flood holds neither connections nor unbounded memory.
 */
class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly queue: number,
  ) {}

  async run<T>(task: () => Promise<T>, busy: () => Error): Promise<T> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.queue) throw busy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter, or give it back.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
