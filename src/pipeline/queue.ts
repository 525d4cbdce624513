// A bounded queue between a producer loop and its consumers: the producer waits
// when `capacity` items are waiting, so prefetching never runs away with memory.
// Several pulls may wait at once (a trainer asking batches ahead): they are
// answered in the order they were made.
export class BoundedQueue<T> {
  private items: T[] = [];
  private waitingConsumers: { resolve: (v: IteratorResult<T>) => void; reject: (err: unknown) => void }[] = [];
  private waitingProducer: (() => void) | undefined;
  private closed = false;
  private failure: unknown;

  constructor(private readonly capacity: number) {}

  async push(item: T): Promise<void> {
    const consumer = this.waitingConsumers.shift();
    if (consumer) {
      consumer.resolve({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (this.items.length >= this.capacity) await new Promise<void>((r) => (this.waitingProducer = r));
  }

  /** Ends the stream; with a failure, the waiting pulls and every later one throw it. */
  close(failure?: unknown): void {
    this.closed = true;
    this.failure = failure;
    for (const consumer of this.waitingConsumers.splice(0)) {
      if (failure !== undefined) consumer.reject(failure);
      else consumer.resolve({ value: undefined, done: true });
    }
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
    return new Promise((resolve, reject) => this.waitingConsumers.push({ resolve, reject }));
  }
}
