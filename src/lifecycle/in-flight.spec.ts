import fc from 'fast-check';
import { InFlight } from './in-flight.js';

describe('InFlight', () => {
  it('holds exactly what a Set would after any sequence of adds and deletes (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(19)), { maxLength: 200 }), (ops) => {
        const items = Array.from({ length: 20 }, (_, id) => ({ id }));
        const tracked = new InFlight<{ id: number }>();
        const model = new Set<{ id: number }>();
        for (const [add, i] of ops) {
          if (add) {
            tracked.add(items[i]);
            model.add(items[i]);
          } else {
            tracked.delete(items[i]);
            model.delete(items[i]);
          }
          expect(tracked.size).toBe(model.size);
        }
        expect(new Set(tracked.values())).toEqual(model);
      }),
    );
  });

  it('counts an item once, however often it is added or deleted', () => {
    const a = new InFlight<object>();
    const item = {};
    a.add(item);
    a.add(item); // a second add of the same item is no second entry
    expect(a.size).toBe(1);
    a.delete({}); // an item never added is not there to delete
    expect(a.size).toBe(1);
    a.delete(item);
    a.delete(item);
    expect(a.size).toBe(0);
  });

  it('gives a snapshot that deleting during iteration does not disturb', () => {
    const list = new InFlight<{ n: number }>();
    const items = [1, 2, 3, 4].map((n) => ({ n }));
    for (const item of items) list.add(item);
    const seen: number[] = [];
    for (const item of list.values()) {
      seen.push(item.n);
      list.delete(item);
    }
    expect(seen.sort()).toEqual([1, 2, 3, 4]);
    expect(list.size).toBe(0);
  });
});
