// A fixed-capacity history: the newest `capacity` items, oldest dropped first,
// plus a count of everything ever pushed. Long runs keep bounded memory.
export class RingBuffer<T> {
  private readonly items: T[] = [];
  private start = 0;
  /** Items pushed since creation, including those dropped. */
  total = 0;

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`ring buffer capacity must be >= 1, got ${capacity}`);
  }

  push(item: T): void {
    this.total++;
    if (this.items.length < this.capacity) {
      this.items.push(item);
      return;
    }
    this.items[this.start] = item;
    this.start = (this.start + 1) % this.capacity;
  }

  get length(): number {
    return this.items.length;
  }

  /** Oldest first. */
  toArray(): T[] {
    return [...this.items.slice(this.start), ...this.items.slice(0, this.start)];
  }

  /** The newest n (all, if fewer), oldest first. */
  latest(n: number): T[] {
    const len = this.items.length;
    const k = Math.max(0, Math.min(n, len));
    return Array.from({ length: k }, (_, i) => this.items[(this.start + len - k + i) % len]!);
  }

  first(): T | undefined {
    return this.items.length ? this.items[this.start] : undefined;
  }

  last(): T | undefined {
    if (!this.items.length) return undefined;
    return this.items[(this.start + this.items.length - 1) % this.items.length];
  }
}
