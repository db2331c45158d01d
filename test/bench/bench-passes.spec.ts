// bench/passes.mjs: the order of the fixed-rate phase's passes, and what a pass of servers run at
// once (BENCH_TOGETHER) logs of their CPU per request against the service's.
import fc from 'fast-check';
import { passOrder, passRatios } from '../../bench/passes.mjs';

describe('passOrder', () => {
  it('keeps the order in odd passes and reverses it in even ones, so each server goes first as often', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 5 }), (names) => {
        expect(passOrder(names, 1)).toEqual(names);
        expect(passOrder(names, 2)).toEqual([...names].reverse());
        expect(passOrder(names, 3)).toEqual(names);
        const firsts = [1, 2, 3, 4].map((pass) => passOrder(names, pass)[0]);
        expect(firsts.filter((n) => n === names[0])).toHaveLength(names.length === 1 ? 4 : 2);
      }),
    );
  });
});

describe('passRatios', () => {
  it("gives each server's CPU per request over the service's, wherever the service ran in the pass", () => {
    expect(
      passRatios(['candidate', 'service', 'floor'], [{ cpuUsPerReq: 404 }, { cpuUsPerReq: 400 }, { cpuUsPerReq: 308 }]),
    ).toBe('candidate/service 1.01x, floor/service 0.77x');
  });

  it('compares with the first server when the service did not run, and leaves out a server without a figure', () => {
    expect(
      passRatios(['floor', 'raw', 'peer'], [{ cpuUsPerReq: 200 }, { cpuUsPerReq: 150 }, { cpuUsPerReq: null }]),
    ).toBe('raw/floor 0.75x');
  });

  it('says nothing when the base has no figure', () => {
    expect(passRatios(['service', 'floor'], [{ cpuUsPerReq: null }, { cpuUsPerReq: 300 }])).toBe('');
  });
});
