import { QueryWatch } from './pool.js';

describe('QueryWatch', () => {
  let now = 0;
  let watch: QueryWatch;
  beforeEach(() => {
    now = 1_000;
    watch = new QueryWatch(2_000, () => now);
  });
  afterEach(() => watch.stop());

  it("fails a query once the bound has passed, with pg's own message, and only once", () => {
    const failures: Error[] = [];
    const slow = watch.start((err) => failures.push(err));
    const quick = watch.start(() => failures.push(new Error('quick was failed')));
    expect(watch.pending).toBe(2);
    now += 500;
    expect(watch.settle(quick)).toBe(true); // answered in time
    now += 1_500; // exactly at the bound: not past it
    watch.sweep();
    expect(failures).toEqual([]);
    now += 1;
    watch.sweep();
    watch.sweep();
    expect(failures.map((e) => e.message)).toEqual(['Query read timeout']);
    expect(watch.pending).toBe(0);
    // The answer that arrives after the bound is dropped: the caller has its error already.
    expect(watch.settle(slow)).toBe(false);
  });

  it('never fails a query that was answered', () => {
    const failed = jest.fn();
    const query = watch.start(failed);
    expect(watch.settle(query)).toBe(true);
    expect(watch.settle(query)).toBe(false);
    now += 10_000;
    watch.sweep();
    expect(failed).not.toHaveBeenCalled();
  });
});
