/**
 * A stopped clock for the service's in-process caches. lru-cache measures TTLs with
 * performance.now() of the `performance` object it found when it was imported; Jest's fake
 * timers put another object in its place and so never reach it (nor does any Clock the app is
 * given). This stops that very object's clock, so an entry expires when the test moves the
 * clock past its TTL, never because the machine was slow.
 *
 * lru-cache also remembers a reading for 1 ms of real time (its ttlResolution): under fake
 * timers advance those too; with real ones, wait for the expiry with waitFor.
 */
const processPerformance = performance;

export interface CacheClock {
  advance(ms: number): void;
  restore(): void;
}

export function stopCacheClock(): CacheClock {
  let now = processPerformance.now();
  const spy = jest.spyOn(processPerformance, 'now').mockImplementation(() => now);
  return {
    advance: (ms) => {
      now += ms;
    },
    restore: () => spy.mockRestore(),
  };
}
