import { GuessBudgets } from './guess-budgets.js';

const MINUTE_START = Date.parse('2026-11-22T12:00:00Z');

describe('GuessBudgets', () => {
  it('refuses an address once its failed lookups reach the budget, until the UTC minute ends', () => {
    const budgets = new GuessBudgets(2, 1_000, 1);
    const spent: boolean[] = [];
    for (let i = 0; i < 2; i++) {
      const failures = budgets.check('203.0.113.7', MINUTE_START + 1_000);
      if (typeof failures === 'string') throw new Error(`refused: ${failures}`);
      spent.push(budgets.charge(failures));
    }
    // The charge that spends the budget says so, once (the warn line of a crossing).
    expect(spent).toEqual([false, true]);
    expect(budgets.check('203.0.113.7', MINUTE_START + 59_999)).toBe('address_budget');
    // Another address has its own budget; the next minute starts afresh.
    expect(typeof budgets.check('198.51.100.1', MINUTE_START + 59_999)).toBe('object');
    expect(typeof budgets.check('203.0.113.7', MINUTE_START + 60_000)).toBe('object');
  });

  it('charges nothing for a lookup that found its key', () => {
    const budgets = new GuessBudgets(1, 1_000, 1);
    for (let i = 0; i < 5; i++) expect(typeof budgets.check('203.0.113.7', MINUTE_START)).toBe('object');
  });

  it("refuses every address once the instance's failed lookups a second are spent, and refills with time", () => {
    const budgets = new GuessBudgets(1_000, 2, 1);
    const at = MINUTE_START + 10_000;
    for (const address of ['a', 'b']) {
      const failures = budgets.check(address, at);
      if (typeof failures === 'string') throw new Error(`refused: ${failures}`);
      budgets.charge(failures);
    }
    expect(budgets.check('c', at)).toBe('instance_budget');
    expect(budgets.check('c', at + 499)).toBe('instance_budget');
    expect(typeof budgets.check('c', at + 500)).toBe('object');
  });

  it('runs at most `concurrent` lookups at once, queues a bounded number, and refuses beyond the queue', async () => {
    const budgets = new GuessBudgets(1_000, 1_000, 1);
    const busy = () => new Error('busy');
    let release!: () => void;
    const first = budgets.run(() => new Promise<string>((resolve) => (release = () => resolve('first'))), busy);
    let started = 0;
    const queued = Array.from({ length: 100 }, () =>
      budgets.run(async () => {
        started += 1;
        return 'queued';
      }, busy),
    );
    const over = budgets.run(async () => 'over', busy).catch((err: Error) => err.message);
    expect(started).toBe(0);
    release();
    expect(await first).toBe('first');
    expect(await Promise.all(queued)).toEqual(Array(100).fill('queued'));
    expect(started).toBe(100);
    expect(await over).toBe('busy');
  });
});
