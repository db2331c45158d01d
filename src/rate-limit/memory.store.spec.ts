import fc from 'fast-check';
import { SystemClock } from '../time/clock.js';
import { ENTRY_BYTES, MemoryRateLimitStore } from './memory.store.js';
import { counterName, MAX_SUBJECT_LENGTH } from './rate-limit.store.js';
import { ConsumeRequest, windowStart, WindowSpec } from './rate-limit.windows.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
const T = Date.parse('2026-11-22T12:00:10Z');
const FREE: WindowSpec[] = [
  { name: 'minute', ttlMs: MINUTE, limit: 60 },
  { name: 'day', ttlMs: DAY, limit: 1000 },
];

const req = (nowMs: number, windows = FREE, subject = 'key:1', banThreshold = 20, banMs = 900_000): ConsumeRequest => ({
  subject,
  nowMs,
  windows,
  banThreshold,
  banMs,
});

describe('MemoryRateLimitStore', () => {
  let store: MemoryRateLimitStore;
  beforeEach(() => {
    store = new MemoryRateLimitStore(new SystemClock(), 1000);
  });

  it('allows the limit, then refuses until the window resets', async () => {
    for (let i = 1; i <= 60; i++) {
      const r = store.consume(req(T));
      expect(r.outcome).toBe('allowed');
      expect(r.windows.map((w) => w.count)).toEqual([i, i]);
    }
    const refused = store.consume(req(T + 49_999));
    expect(refused.outcome).toBe('limited');
    expect(refused.windows.map((w) => w.count)).toEqual([60, 60]); // refusals consume nothing
    const next = store.consume(req(Date.parse('2026-11-22T12:01:00Z')));
    expect(next.outcome).toBe('allowed');
    expect(next.windows.map((w) => w.count)).toEqual([1, 61]);
  });

  it('counts subjects separately', async () => {
    for (let i = 0; i < 60; i++) store.consume(req(T, FREE, 'key:1'));
    expect(store.consume(req(T, FREE, 'key:1')).outcome).toBe('limited');
    expect(store.consume(req(T, FREE, 'key:2')).outcome).toBe('allowed');
    expect(store.consume(req(T, FREE, 'ip:127.0.0.1')).outcome).toBe('allowed');
  });

  it('bans after more than the threshold of refusals in one limited period, until the ban ends', async () => {
    for (let i = 0; i < 60; i++) store.consume(req(T));
    for (let i = 0; i < 20; i++) expect(store.consume(req(T)).outcome).toBe('limited');
    const banned = store.consume(req(T + 1));
    expect(banned).toEqual(expect.objectContaining({ outcome: 'banned', bannedUntilMs: T + 1 + 900_000 }));
    // The ban outlasts the minute window; requests during it are not counted.
    expect(store.consume(req(T + 600_000)).outcome).toBe('banned');
    const after = store.consume(req(T + 1 + 900_000));
    expect(after.outcome).toBe('allowed');
    expect(after.windows.map((w) => w.count)).toEqual([1, 61]);
  });

  it('starts the refusal count afresh in each limited period', async () => {
    for (let i = 0; i < 60; i++) store.consume(req(T));
    for (let i = 0; i < 20; i++) store.consume(req(T));
    const nextMinute = Date.parse('2026-11-22T12:01:00Z');
    for (let i = 0; i < 60; i++) store.consume(req(nextMinute));
    for (let i = 0; i < 20; i++) expect(store.consume(req(nextMinute)).outcome).toBe('limited');
    expect(store.consume(req(nextMinute)).outcome).toBe('banned');
  });

  it('keeps no timer per hit and holds at most maxSubjects subjects', async () => {
    jest.useFakeTimers();
    try {
      const small = new MemoryRateLimitStore(new SystemClock(), 100);
      for (let i = 0; i < 1000; i++) small.consume(req(T + i, FREE, `ip:10.0.${i >> 8}.${i & 255}`));
      expect(jest.getTimerCount()).toBe(0);
      expect(small.size).toBe(100);
    } finally {
      jest.useRealTimers();
    }
  });

  it('holds at most maxBytes (estimated), and keeps long subjects under a short name', async () => {
    const small = new MemoryRateLimitStore(new SystemClock(), 100_000, 64 * 1024);
    for (let i = 0; i < 1000; i++) small.consume(req(T, FREE, `ip:${i}:${'x'.repeat(16 * 1024)}`));
    expect(small.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(small.size).toBe(Math.floor((64 * 1024) / (ENTRY_BYTES + 2 * counterName(`ip:${'x'.repeat(100)}`).length)));
    // The same long subject is one subject: its counts add up.
    const long = `ip:${'y'.repeat(100)}`;
    for (let i = 0; i < 60; i++) expect(small.consume(req(T, FREE, long)).outcome).toBe('allowed');
    expect(small.consume(req(T, FREE, long)).outcome).toBe('limited');
  });

  it('never allows more than a limit in any window, and refuses only when a window is full (property)', () => {
    const step = fc.record({
      advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 2 * DAY })),
      subject: fc.constantFrom('key:1', 'key:2'),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(step, { maxLength: 150 }),
        (perMinute, perDay, threshold, steps) => {
          const s = new MemoryRateLimitStore(new SystemClock(), 1000);
          const windows: WindowSpec[] = [
            { name: 'minute', ttlMs: MINUTE, limit: perMinute },
            { name: 'day', ttlMs: DAY, limit: perDay },
          ];
          const allowed = new Map<string, number>();
          const bannedUntil = new Map<string, number>();
          let now = T;
          for (const { advanceMs, subject } of steps) {
            now += advanceMs;
            const r = s.consumeSync(req(now, windows, subject, threshold, 60_000));
            const keys = windows.map((w) => `${subject}:${w.name}:${windowStart(now, w.ttlMs)}`);
            const before = keys.map((k) => allowed.get(k) ?? 0);
            const inBan = (bannedUntil.get(subject) ?? 0) > now;
            if (inBan) expect(r.outcome).toBe('banned');
            else if (before.every((c, i) => c < windows[i].limit)) expect(r.outcome).toBe('allowed');
            else expect(['limited', 'banned']).toContain(r.outcome);
            if (r.outcome === 'allowed') keys.forEach((k) => allowed.set(k, (allowed.get(k) ?? 0) + 1));
            if (r.outcome === 'banned') bannedUntil.set(subject, r.bannedUntilMs as number);
            keys.forEach((k, i) => expect(allowed.get(k) ?? 0).toBeLessThanOrEqual(windows[i].limit));
            expect(r.windows.map((w) => w.count)).toEqual(keys.map((k) => allowed.get(k) ?? 0));
          }
        },
      ),
    );
  });
});

describe('counterName', () => {
  it('keeps short subjects, and names long ones by their hash: short, distinct, stable', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3000 }), fc.string({ maxLength: 3000 }), (a, b) => {
        const [x, y] = [counterName(a), counterName(b)];
        expect(x.length).toBeLessThanOrEqual(Math.max(MAX_SUBJECT_LENGTH, 'sha256:'.length + 43));
        if (a.length <= MAX_SUBJECT_LENGTH) expect(x).toBe(a);
        expect(counterName(a)).toBe(x);
        if (a !== b) expect(x).not.toBe(y);
      }),
    );
  });

  it("keeps keys' counters and bans, and addresses' bans, through a flood of fresh addresses five times its cap", () => {
    const small = new MemoryRateLimitStore(new SystemClock(), 100);
    const ban = (subject: string) => {
      for (let i = 0; i < 60 + 21; i++) small.consume(req(T, FREE, subject));
      expect(small.consume(req(T, FREE, subject)).outcome).toBe('banned');
    };
    ban('key:9');
    ban('ip:198.51.100.9');
    for (let i = 0; i < 5; i++) small.consume(req(T, FREE, 'key:10'));
    for (let i = 0; i < 500; i++) small.consume(req(T, FREE, `ip:10.0.${i >> 8}.${i & 255}`));
    expect(small.size).toBeLessThanOrEqual(200);
    expect(small.consume(req(T + 1000, FREE, 'key:9'))).toMatchObject({
      outcome: 'banned',
      bannedUntilMs: T + 900_000,
    });
    expect(small.consume(req(T + 1000, FREE, 'ip:198.51.100.9'))).toMatchObject({
      outcome: 'banned',
      bannedUntilMs: T + 900_000,
    });
    expect(small.consume(req(T + 1000, FREE, 'key:10')).windows.map((w) => w.count)).toEqual([6, 6]);
  });
});

describe('MemoryRateLimitStore.peek', () => {
  /** Requests of two subjects over two minutes, at small limits and a low ban threshold, so limits and bans come often. */
  const SMALL: WindowSpec[] = [
    { name: 'minute', ttlMs: MINUTE, limit: 3 },
    { name: 'day', ttlMs: DAY, limit: 10 },
  ];
  const steps = fc.array(
    fc.record({
      subject: fc.constantFrom('key:1', 'ip:192.0.2.1'),
      atMs: fc.integer({ min: 0, max: 2 * MINUTE }),
      peek: fc.boolean(),
    }),
    { maxLength: 200 },
  );
  const at = (s: { subject: string; atMs: number }) => req(T + s.atMs, SMALL, s.subject, 2, 30_000);

  it('changes nothing: consumes with peeks between them decide exactly as without (property)', () => {
    fc.assert(
      fc.property(steps, (list) => {
        const sorted = [...list].sort((a, b) => a.atMs - b.atMs);
        const plain = new MemoryRateLimitStore(new SystemClock(), 1000);
        const peeked = new MemoryRateLimitStore(new SystemClock(), 1000);
        for (const s of sorted) {
          if (s.peek) peeked.peek(at(s));
          expect(peeked.consume(at(s))).toEqual(plain.consume(at(s)));
        }
      }),
    );
  });

  it('reads what the next request starts from: its counts, and its ban (property)', () => {
    fc.assert(
      fc.property(steps, (list) => {
        const store = new MemoryRateLimitStore(new SystemClock(), 1000);
        for (const s of [...list].sort((a, b) => a.atMs - b.atMs)) {
          const read = store.peek(at(s));
          const decided = store.consume(at(s));
          if (decided.outcome === 'allowed') {
            expect(read.bannedUntilMs).toBeUndefined();
            expect(read.windows.map((w) => w.count + 1)).toEqual(decided.windows.map((w) => w.count));
          } else {
            expect(read.windows).toEqual(decided.windows);
            if (read.bannedUntilMs !== undefined)
              expect(decided).toMatchObject({ outcome: 'banned', bannedUntilMs: read.bannedUntilMs });
            // A ban the read did not see is one this very request earned.
            else if (decided.outcome === 'banned') expect(decided.bannedUntilMs).toBe(at(s).nowMs + 30_000);
          }
        }
      }),
    );
  });
});
