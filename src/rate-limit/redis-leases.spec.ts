import { ConsumeRequest, WindowSpec } from './rate-limit.windows.js';
import { leaseAsk, Leases, LEASE_MAX, LEASE_MIN_LIMIT, LEASE_MS, LONG_LEASE_MS, UNHEARD } from './redis-leases.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** The clock requests are stamped with; tests move it instead of waiting. */
class FakeClock {
  constructor(public nowMs = Date.parse('2026-11-22T12:00:10Z')) {}
  advance(ms: number): void {
    this.nowMs += ms;
  }
}

const WINDOWS: WindowSpec[] = [
  { name: 'minute', ttlMs: MINUTE, limit: 1_000 },
  { name: 'day', ttlMs: DAY, limit: 100_000 },
];

describe('Leases', () => {
  let clock: FakeClock;
  let leases: Leases;
  const request = (windows = WINDOWS, subject = 'key:1'): ConsumeRequest => ({
    subject,
    nowMs: clock.nowMs,
    windows,
    banThreshold: 10,
    banMs: MINUTE,
  });
  const counts = (result: ReturnType<Leases['spend']>) => result?.windows.map((w) => w.count);

  beforeEach(() => {
    clock = new FakeClock();
    leases = new Leases();
  });

  it('spends a granted lease here, each request counted as what others had plus what this instance spent', () => {
    // The script counted 10 for this instance on top of 100 (minute) and 500 (day) counted before.
    const lease = leases.granted(request(), 10, [110, 510], UNHEARD);
    expect(lease).toMatchObject({ granted: 10, used: 1, base: [100, 500] });
    for (let used = 2; used <= 10; used++) {
      clock.advance(10);
      expect(counts(leases.spend(request(), UNHEARD))).toEqual([100 + used, 500 + used]);
    }
    expect(leases.spend(request(), UNHEARD)).toBeUndefined();
    expect(leases.peek('key:1')).toMatchObject({ granted: 10, used: 10 });
  });

  it('stops spending a lease LEASE_MS after it was granted, and gives back what it left unspent', () => {
    leases.granted(request(), 10, [110, 510], UNHEARD);
    clock.advance(LEASE_MS - 1);
    expect(counts(leases.spend(request(), UNHEARD))).toEqual([102, 502]);
    clock.advance(1);
    expect(leases.spend(request(), UNHEARD)).toBeUndefined();
    const ended = leases.peek('key:1');
    expect(ended).toBeDefined();
    expect(leases.end(ended!, request())).toEqual([8, 8]);
    expect(leases.peek('key:1')).toBeUndefined();
  });

  it('lives LONG_LEASE_MS when granted while the ban channel is heard, and only while it stays in that epoch', () => {
    leases.granted(request(), 10, [110, 510], 3);
    clock.advance(LONG_LEASE_MS - 1);
    expect(counts(leases.spend(request(), 3))).toEqual([102, 502]);
    // The channel went unheard, or was heard again in a later epoch: a ban may have been missed.
    expect(leases.spend(request(), UNHEARD)).toBeUndefined();
    expect(leases.spend(request(), 4)).toBeUndefined();
    clock.advance(1);
    expect(leases.spend(request(), 3)).toBeUndefined();
  });

  it("drops a banned subject's lease, its counts unspent", () => {
    leases.granted(request(), 10, [110, 510], 3);
    leases.drop('key:1');
    expect(leases.spend(request(), 3)).toBeUndefined();
    expect(leases.peek('key:1')).toBeUndefined();
  });

  it('gives nothing back to a window that has ended since the lease was taken', () => {
    leases.granted(request(), 10, [110, 510], UNHEARD);
    clock.advance(MINUTE); // the next minute; the same day
    expect(leases.spend(request(), UNHEARD)).toBeUndefined();
    expect(leases.end(leases.peek('key:1')!, request())).toEqual([0, 9]);
  });

  it('never spends a lease in windows whose limits changed (a key moved to another plan)', () => {
    leases.granted(request(), 10, [110, 510], UNHEARD);
    const replanned = WINDOWS.map((w) => ({ ...w, limit: w.limit * 2 }));
    expect(leases.spend(request(replanned), UNHEARD)).toBeUndefined();
    expect(counts(leases.spend(request(), UNHEARD))).toEqual([102, 502]);
  });

  it('keeps each subject to its own lease', () => {
    leases.granted(request(WINDOWS, 'key:1'), 10, [110, 510], UNHEARD);
    expect(leases.spend(request(WINDOWS, 'key:2'), UNHEARD)).toBeUndefined();
  });

  it('asks for twice the pace of the last lease over a lease lifetime, from 2 up to LEASE_MAX', () => {
    expect(leaseAsk(undefined, clock.nowMs)).toBe(2);
    const lease = leases.granted(request(), 10, [110, 510], UNHEARD)!;
    lease.used = 10;
    // Spent 10 in a thousandth of its lifetime: 20,000 per lifetime, capped.
    expect(leaseAsk(lease, clock.nowMs + LEASE_MS / 1000)).toBe(LEASE_MAX);
    // Spent 10 over its whole lifetime: twice that.
    expect(leaseAsk(lease, clock.nowMs + LEASE_MS)).toBe(20);
    lease.used = 1;
    expect(leaseAsk(lease, clock.nowMs + 2 * LEASE_MS)).toBe(2);
    // The next lease, granted while the channel is heard (epoch 3), lives long: the same pace over its longer lifetime.
    lease.used = 5;
    expect(leaseAsk(lease, clock.nowMs + LEASE_MS, 3)).toBe((2 * 5 * LONG_LEASE_MS) / LEASE_MS);
  });

  it('leases only in windows of at least LEASE_MIN_LIMIT, and not while the subject was last seen full', () => {
    const small = [{ name: 'minute', ttlMs: MINUTE, limit: LEASE_MIN_LIMIT - 1 }];
    expect(leases.leaseable(request(small))).toBe(false);
    expect(leases.leaseable(request())).toBe(true);
    // Granted 1 (no room for a lease): full in these windows until one of them ends.
    expect(leases.granted(request(), 1, [999, 5_000], UNHEARD)).toBeUndefined();
    expect(leases.leaseable(request())).toBe(false);
    clock.advance(MINUTE);
    expect(leases.leaseable(request())).toBe(true);
    leases.granted(request(), 1, [1, 5_001], UNHEARD);
    expect(leases.leaseable(request())).toBe(false);
    leases.granted(request(), 5, [6, 5_006], UNHEARD);
    expect(leases.leaseable(request())).toBe(true);
  });

  it('forgets every lease on clear (Redis went away)', () => {
    leases.granted(request(), 10, [110, 510], UNHEARD);
    leases.clear();
    expect(leases.spend(request(), UNHEARD)).toBeUndefined();
    expect(leases.peek('key:1')).toBeUndefined();
  });
});
