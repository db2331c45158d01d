/** Where an item sits in its InFlight list. */
const SLOT = Symbol('animal-store.in-flight.slot');

type Tracked = object & { [SLOT]?: number };

/**
 * The requests in flight, as a dense array with each item's index on the item: add and delete
 * are O(1) (the last item moves into the freed slot) and allocate nothing once the array has
 * grown to the peak concurrency.
 *
 * Not a Set, on purpose. A Set with one add and one delete per request rehashes every few
 * dozen requests, and V8 keeps each old hash table (with the entries it held) linked to its
 * successor until a full GC. Those dead tables keep the young objects they point to alive
 * through every scavenge: with the responses in a Set, each request's objects were promoted
 * to the old generation (about 6 MB per scavenge at 2,500 req/s, 20 ms scavenge pauses and an
 * old generation growing by 20 MB/s on Node 24; `node --trace-gc-nvp`, README "Performance").
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
