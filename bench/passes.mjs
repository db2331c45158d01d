// The fixed-rate phase's passes over the servers (bench/compare.mjs): the order of each, and with
// BENCH_TOGETHER what one pass says about the servers' CPU per request against one another.

/** The servers' order in pass `pass` (from 1): as given in odd passes, reversed in even ones. */
export function passOrder(names, pass) {
  return pass % 2 === 1 ? [...names] : [...names].reverse();
}

/**
 * One pass's CPU per request of each server over the service's (over the first server's when the
 * service did not run), as `floor/service 0.77x, candidate/service 1.01x`. A server without a
 * figure is left out; so is every one when the base has none.
 */
export function passRatios(names, runs) {
  const at = names.includes('service') ? names.indexOf('service') : 0;
  const base = runs[at]?.cpuUsPerReq;
  if (!base) return '';
  return names
    .flatMap((name, i) => {
      const cpu = runs[i]?.cpuUsPerReq;
      return i === at || typeof cpu !== 'number' ? [] : [`${name}/${names[at]} ${(cpu / base).toFixed(2)}x`];
    })
    .join(', ');
}
