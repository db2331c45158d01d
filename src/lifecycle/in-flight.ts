/** Where an item sits in its InFlight list. */
const SLOT = Symbol('animal-store.in-flight.slot');

type Tracked = object & { [SLOT]?: number };

/**
 * Items in flight (the responses the shutdown drain waits for, the queries QueryWatch bounds),
 * as a dense array with each item's index on the item: add and delete are O(1) (the last item
 * moves into the freed slot) and allocate nothing once the array has grown to the peak
 * concurrency.
 *
 * Not a Set, on purpose: with one add and one delete per request, a Set costs GC time under
 * load that this array does not (bench scenario listPets, its GC column).
 * This array keeps nothing of an item once it is deleted.
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
