// A bounded queue between a producer loop and a consumer: the producer waits
// when `capacity` items are waiting, so prefetching never runs away with memory.
export class BoundedQueue<T> {
  private items: T[] = [];
  private waitingConsumer: { resolve: (v: IteratorResult<T>) => void; reject: (err: unknown) => void } | undefined;
  private waitingProducer: (() => void) | undefined;
  private closed = false;
  private failure: unknown;

  constructor(private readonly capacity: number) {}

  async push(item: T): Promise<void> {
    if (this.waitingConsumer) {
      const consumer = this.waitingConsumer;
      this.waitingConsumer = undefined;
      consumer.resolve({ value: item, done: false });
      return;
    }
    this.items.push(item);
    if (this.items.length >= this.capacity) await new Promise<void>((r) => (this.waitingProducer = r));
  }

  /** Ends the stream; with a failure, the consumer's next pull throws it. */
  close(failure?: unknown): void {
    this.closed = true;
    this.failure = failure;
    if (failure !== undefined) this.waitingConsumer?.reject(failure);
    else this.waitingConsumer?.resolve({ value: undefined, done: true });
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
    return new Promise((resolve, reject) => (this.waitingConsumer = { resolve, reject }));
  }
}
