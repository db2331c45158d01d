import { LRUCache } from 'lru-cache';
import { ConsumeRequest, ConsumeResult, windowReset, windowStart } from './rate-limit.windows.js';

/**
 * Leases (see RATE_LIMIT_SCRIPT) spare most requests of a busy key a round trip to Redis
 * (bench scenario listPetsManyKeys). A subject whose every window
 * allows at least LEASE_MIN_LIMIT takes counts ahead and spends them here, for at most its
 * lifetime: first 2, then twice what its last lease spent per lifetime (so a lease follows the
 * subject's pace on this instance), up to LEASE_MAX, and never more than a LEASE_HEADROOM-th of
 * a window's room or more than would leave the subject's pace short of room while the lease
 * lasts. Smaller windows (the free plan's 60 a minute, an address's requests) are decided in
 * Redis request by request.
 * A lease lives LEASE_MS, or LONG_LEASE_MS when it was granted while this instance heard the
 * ban channel (BanChannel) and the channel has been heard ever since (the same `epoch`): a ban
 * then reaches this instance on the channel, which drops the subject's lease, instead of at the
 * lease's end. Keys spending a few requests a second, most of production's, then need Redis
 * about once per LEASE_MAX-or-headroom counts instead of every LEASE_MS.
 * What a lease costs in exactness: the X-RateLimit-Remaining another instance reports counts
 * this instance's unspent counts as used (until the lease has ended and the subject next needs
 * Redis here, which gives them back), and a ban set by another instance is seen here once the
 * channel delivers it, or once the lease ends when the channel was not heard. No window ever
 * admits more than its limit.
 */
export const LEASE_MAX = 64;
/**
 * A lease takes at most a LEASE_HEADROOM-th of a window's room: 15 of pro's 300 a minute, enough
 * for a whole lifetime of a key sending a request every two seconds, so such keys need Redis about
 * twice a minute per instance (bench scenario listPetsManyKeys).
 */
export const LEASE_HEADROOM = 20;
export const LEASE_MS = 5_000;
export const LONG_LEASE_MS = 30_000;
/** The epoch of a lease granted while the ban channel was not heard: never long. */
export const UNHEARD = -1;
export const LEASE_MIN_LIMIT = 200;
/** What a subject without a recent lease on this instance asks for. */
const FIRST_LEASE = 2;
/** Subjects with a lease held at once; the least recently used are forgotten (their counts stay spent). */
const MAX_LEASES = 10_000;

/** Counts an instance has taken from Redis for one subject and spends locally. */
export interface Lease {
  /** The windows (start, limit) the counts were taken in. */
  starts: number[];
  limits: number[];
  /** Every window's count in Redis before the lease: what others had spent. */
  base: number[];
  granted: number;
  used: number;
  /** When it was granted; it ends LEASE_MS later, or LONG_LEASE_MS while its epoch is current. */
  grantedAtMs: number;
  /** The ban channel's epoch it was granted in (UNHEARD: the channel was not heard). */
  epoch: number;
}

/**
 * The leases this instance holds, by subject, and the subjects last seen with too little room for
 * one. Both are read with peek(), which leaves the order alone: an entry moves up when it is set
 * (a lease granted, a subject seen full), so the oldest go first, which are the ones that have
 * run out, and a read costs no reordering (bench scenario listPetsManyKeys). Times are the requests' own (`nowMs`, from the app's Clock).
 */
export class Leases {
  private readonly held = new LRUCache<string, Lease>({ max: MAX_LEASES });
  /** Subjects last seen with too little room for a lease, with the windows they were seen in. */
  private readonly full = new LRUCache<string, string>({ max: MAX_LEASES });

  /**
   * The request counted on its subject's lease, when one is held with counts left, has not ended
   * and was taken in the request's windows; else undefined (the request goes to Redis).
   */
  spend(request: ConsumeRequest, epoch: number): ConsumeResult | undefined {
    const lease = this.held.peek(request.subject);
    if (lease !== undefined && spendable(lease, request, epoch)) {
      lease.used += 1;
      return leased(request, lease);
    }
    return undefined;
  }

  /**
   * What the subject's next request would start from here, without spending anything: per
   * window, the count a lease it would spend from reports (`leased`), or else what it would give
   * back to Redis of an ended lease first (`refunds`, zeros when none is held).
   */
  pending(request: ConsumeRequest, epoch: number): { leased: number[] } | { refunds: number[] } {
    const lease = this.held.peek(request.subject);
    if (lease === undefined) return { refunds: request.windows.map(() => 0) };
    if (spendable(lease, request, epoch)) return { leased: lease.base.map((b) => b + lease.used) };
    return { refunds: unspent(lease, request) };
  }

  /** The subject's lease, spent or not. */
  peek(subject: string): Lease | undefined {
    return this.held.peek(subject);
  }

  /** Forgets the subject's lease, counts unspent and all (the subject was banned). */
  drop(subject: string): void {
    this.held.delete(subject);
  }

  /** Forgets an ended lease; per window of the request, what it leaves unspent to give back. */
  end(lease: Lease, request: ConsumeRequest): number[] {
    this.held.delete(request.subject);
    return unspent(lease, request);
  }

  /**
   * Whether a lease could be granted now: every window big enough for one, and not seen too
   * full for one in these windows (then requests skip waiting for a lease that cannot come).
   */
  leaseable(request: ConsumeRequest): boolean {
    for (const w of request.windows) if (w.limit < LEASE_MIN_LIMIT) return false;
    const full = this.full.peek(request.subject);
    return full === undefined || full !== windowsKey(request);
  }

  /**
   * Records what the script granted an allowed request: `granted` counts, with `counts` each
   * window's count after them. More than 1 is a lease, held from the request's instant in the
   * ban channel's `epoch`, and returned with this request spent from it; 1 marks the subject
   * full in these windows.
   */
  granted(request: ConsumeRequest, granted: number, counts: readonly number[], epoch: number): Lease | undefined {
    if (granted <= 1) {
      this.full.set(request.subject, windowsKey(request));
      return undefined;
    }
    this.full.delete(request.subject);
    const lease: Lease = {
      starts: request.windows.map((w) => windowStart(request.nowMs, w.ttlMs)),
      limits: request.windows.map((w) => w.limit),
      base: request.windows.map((_w, i) => counts[i] - granted),
      granted,
      used: 1,
      grantedAtMs: request.nowMs,
      epoch,
    };
    this.held.set(request.subject, lease);
    return lease;
  }

  /** Forgets every lease (Redis is down: the counts they hold are not given back). */
  clear(): void {
    this.held.clear();
  }
}

/** How long a lease granted now lives, the ban channel being in `epoch` (UNHEARD: not heard). */
export function lifetimeIn(epoch: number): number {
  return epoch === UNHEARD ? LEASE_MS : LONG_LEASE_MS;
}

/** How long a lease lives, the ban channel being in `epoch` now: long only if granted in that epoch. */
export function leaseLifetime(lease: Lease, epoch: number): number {
  return lease.epoch === epoch ? lifetimeIn(epoch) : LEASE_MS;
}

/** Whether the request can be counted on this lease: counts left, not ended, taken in its windows. */
function spendable(lease: Lease, request: ConsumeRequest, epoch: number): boolean {
  return (
    lease.used < lease.granted &&
    request.nowMs < lease.grantedAtMs + leaseLifetime(lease, epoch) &&
    sameWindows(lease, request)
  );
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
 * Counts to ask for after `last`: twice what it spent, scaled to the lifetime of a lease granted
 * in `epoch` by the time it lasted (until spent, or until it ran out), so a subject spending
 * fast here takes more at once and a slow one holds few counts that others cannot use.
 */
export function leaseAsk(last: Lease | undefined, nowMs: number, epoch = UNHEARD): number {
  if (last === undefined) return FIRST_LEASE;
  const lastedMs = Math.max(1, Math.min(nowMs - last.grantedAtMs, leaseLifetime(last, epoch)));
  return Math.min(LEASE_MAX, Math.max(FIRST_LEASE, Math.ceil((2 * last.used * lifetimeIn(epoch)) / lastedMs)));
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
export function leased(request: ConsumeRequest, lease: Lease): ConsumeResult {
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
