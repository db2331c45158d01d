import { limitsFor, PLAN_LIMITS } from './plans.js';

describe('plan limits', () => {
  it('are the interface table, and an enterprise key carries its own', () => {
    expect(PLAN_LIMITS).toEqual({
      free: { perMinute: 60, perDay: 1000 },
      pro: { perMinute: 300, perDay: 10_000 },
      business: { perMinute: 1000, perDay: 100_000 },
    });
    expect(limitsFor('pro', null, null)).toEqual({ perMinute: 300, perDay: 10_000 });
    expect(limitsFor('enterprise', 5000, 2_000_000)).toEqual({ perMinute: 5000, perDay: 2_000_000 });
    expect(() => limitsFor('enterprise', null, 5)).toThrow();
  });
});
