/** Where an item sits in its InFlight list. */
const SLOT = Symbol('animal-store.in-flight.slot');

type Tracked = object & { [SLOT]?: number };

/**
 * The requests in flight, as a dense array with each item's index on the item: add and delete
 * are O(1) (the last item moves into the freed slot) and allocate nothing once the array has
 * grown to the peak concurrency.
 *
 * Not a Set, on purpose. With the responses in a Set (one add and one delete per request),
 * each request's objects outlived the young generation whenever it waited for I/O: about 6 MB
 * promoted per scavenge at 2,500 req/s, 20 ms scavenge pauses and an old generation growing by
 * 20 MB/s on Node 24 (`node --trace-gc-nvp`, docs/performance.md); with this array, none. The
 * likely cause: a Set rehashes every few dozen deletions, and V8 links each old hash table,
 * entries and all, to its successor for the iterators it may still have, so the dead tables
 * that reached the old generation keep what they point to alive until a full GC.
 */
export class InFlight<T extends object> {
  private readonly items: (T & Tracked)[] = [];

  get size(): number {
    return this.items.length;
  }

  add(item: T): void {
    const tracked = item as T & Tracked;
    if (tracked[SLOT] !== undefined) return;
    tracked[SLOT] = this.items.length;
    this.items.push(tracked);
  }

  delete(item: T): void {
    const tracked = item as T & Tracked;
    const slot = tracked[SLOT];
    if (slot === undefined || this.items[slot] !== tracked) return;
    tracked[SLOT] = undefined;
    const last = this.items.pop() as T & Tracked;
    if (last !== tracked) {
      this.items[slot] = last;
      last[SLOT] = slot;
    }
  }

  /** A snapshot of the items, safe to iterate while items are added or deleted. */
  values(): T[] {
    return this.items.slice();
  }
}
