// A bounded queue between a producer loop and a consumer: the producer waits
// when `capacity` items are waiting, so prefetching never runs away with memory.
export class BoundedQueue<T> {
  private items: T[] = [];
  private waitingConsumer: ((v: IteratorResult<T>) => void) | undefined;
  private waitingProducer: (() => void) | undefined;
  private closed = false;
  private failure: unknown;

  constructor(private readonly capacity: number) {}

  async push(item: T): Promise<void> {
    if (this.waitingConsumer) {
      const resolve = this.waitingConsumer;
      this.waitingConsumer = undefined;
      resolve({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (this.items.length >= this.capacity) await new Promise<void>((r) => (this.waitingProducer = r));
  }

  close(failure?: unknown): void {
    this.closed = true;
    this.failure = failure;
    this.waitingConsumer?.({ value: undefined, done: true });
    this.waitingConsumer = undefined;
    this.waitingProducer?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async pull(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (this.waitingProducer && this.items.length < this.capacity) {
      const resume = this.waitingProducer;
      this.waitingProducer = undefined;
      resume();
    }
    if (item !== undefined) return { value: item, done: false };
    if (this.failure) throw this.failure;
    if (this.closed) return { value: undefined, done: true };
    return new Promise((resolve) => (this.waitingConsumer = resolve));
  }
}
