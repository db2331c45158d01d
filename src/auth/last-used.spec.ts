import type { StoredApiKey } from '../api-keys/api-keys.service.js';
import { FakeClock } from '../../test/support/app.js';
import { LastUsedTimes, TOUCH_BATCH_MAX, TOUCH_BATCH_MS, TOUCH_INTERVAL_MS } from './last-used.js';

const key = (id: number, lastUsedAt: Date | null = null) => ({ id: BigInt(id), lastUsedAt }) as StoredApiKey;

function setup() {
  const written: Map<bigint, Date>[] = [];
  const keys = { touch: jest.fn(async (uses: ReadonlyMap<bigint, Date>) => void written.push(new Map(uses))) };
  const clock = new FakeClock(new Date('2026-11-28T12:00:00Z'));
  return { times: new LastUsedTimes(keys, clock), keys, clock, written };
}

describe('LastUsedTimes', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('writes the uses of many keys within TOUCH_BATCH_MS in one statement, each at its own instant', async () => {
    const { times, keys, clock, written } = setup();
    times.record(key(1));
    clock.set(new Date(clock.now().getTime() + 300));
    times.record(key(2));
    times.record(key(1));
    await jest.advanceTimersByTimeAsync(TOUCH_BATCH_MS - 1);
    expect(keys.touch).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(written).toEqual([
      new Map([
        [1n, new Date('2026-11-28T12:00:00.000Z')],
        [2n, new Date('2026-11-28T12:00:00.300Z')],
      ]),
    ]);
  });

  it('records a key again only TOUCH_INTERVAL_MS after its last recorded use, here or in the database', async () => {
    const { times, clock, written } = setup();
    times.record(key(1));
    times.record(key(2, new Date(clock.now().getTime() - TOUCH_INTERVAL_MS + 10)));
    await times.flush();
    clock.set(new Date(clock.now().getTime() + TOUCH_INTERVAL_MS - 1));
    times.record(key(1));
    await times.flush();
    clock.set(new Date(clock.now().getTime() + 1));
    times.record(key(1));
    await times.flush();
    expect(written.map((w) => [...w.keys()])).toEqual([[1n], [1n]]);
  });

  it('splits what is due into statements of at most TOUCH_BATCH_MAX keys', async () => {
    const { times, written } = setup();
    for (let id = 1; id <= TOUCH_BATCH_MAX + 1; id++) times.record(key(id));
    await times.flush();
    expect(written.map((w) => w.size)).toEqual([TOUCH_BATCH_MAX, 1]);
  });

  it('writes one batch at a time: a flush during a write waits for it, then writes what came since', async () => {
    const { times, keys, written } = setup();
    let release!: () => void;
    keys.touch.mockImplementationOnce(async (uses) => {
      await new Promise<void>((resolve) => (release = resolve));
      written.push(new Map(uses));
    });
    times.record(key(1));
    const first = times.flush();
    times.record(key(2));
    const second = times.flush();
    await Promise.resolve();
    expect(keys.touch).toHaveBeenCalledTimes(1);
    release();
    await Promise.all([first, second]);
    expect(written.map((w) => [...w.keys()])).toEqual([[1n], [2n]]);
  });
});
