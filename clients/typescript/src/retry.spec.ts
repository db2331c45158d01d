import fc from 'fast-check';
import { DEFAULT_RETRY, retryDelayMs } from './retry.js';

describe('retry delays', () => {
  it('wait Retry-After first, then at least Retry-After and at least the capped exponential backoff (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.option(fc.integer({ min: 0, max: 60_000 }), { nil: undefined }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (failures, retryAfterMs, r) => {
          const delay = retryDelayMs(failures, retryAfterMs, DEFAULT_RETRY, () => r);
          const cap = Math.min(DEFAULT_RETRY.maxDelayMs, DEFAULT_RETRY.baseDelayMs * 2 ** (failures - 1));
          if (retryAfterMs !== undefined && failures === 1) expect(delay).toBe(retryAfterMs);
          else {
            expect(delay).toBeGreaterThanOrEqual(Math.max(retryAfterMs ?? 0, Math.floor(cap / 2)));
            expect(delay).toBeLessThanOrEqual(Math.max(retryAfterMs ?? 0, cap));
          }
        },
      ),
    );
  });

  it('grow exponentially with repeated failures, up to the cap', () => {
    const half = () => 0.5;
    expect([1, 2, 3, 4, 5].map((f) => retryDelayMs(f, undefined, DEFAULT_RETRY, half))).toEqual([
      375, 750, 1500, 3000, 6000,
    ]);
    expect(retryDelayMs(20, undefined, DEFAULT_RETRY, half)).toBe(22_500);
  });
});
