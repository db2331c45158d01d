import { FINISHED_BATCH_MS, FinishedRequests } from './finished-requests.js';

describe('FinishedRequests', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('reports the records of FINISHED_BATCH_MS in one batch, in the order they were added', () => {
    const batches: number[][] = [];
    const finished = new FinishedRequests<number>((batch) => batches.push([...batch]));
    finished.add(1);
    finished.add(2);
    jest.advanceTimersByTime(FINISHED_BATCH_MS - 1);
    expect(batches).toEqual([]);
    finished.add(3);
    jest.advanceTimersByTime(1);
    expect(batches).toEqual([[1, 2, 3]]);
    finished.add(4);
    jest.advanceTimersByTime(FINISHED_BATCH_MS);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('reports what is queued at once on flush(), and nothing twice or empty', () => {
    const batches: number[][] = [];
    const finished = new FinishedRequests<number>((batch) => batches.push([...batch]));
    finished.flush();
    expect(batches).toEqual([]);
    finished.add(1);
    finished.flush();
    expect(batches).toEqual([[1]]);
    jest.advanceTimersByTime(10 * FINISHED_BATCH_MS);
    expect(batches).toEqual([[1]]);
    expect(jest.getTimerCount()).toBe(0);
  });
});
