// Long synchronous work cut into slices. A worker answers the page only between
// its tasks: decoding a whole record in one task (40 TOC batches, or hundreds of
// JPEGs) made a batch the trainer asked for, already made, wait tens of ms.

/** The most a slice runs before the thread's other tasks get their turn. */
export const SLICE_MS = 4;

type Immediate = (run: () => void) => unknown;

/**
 * Lets the thread's queued tasks (a worker's incoming messages) run, then goes on: a task queued behind them.
 * Not scheduler.yield: Chromium runs its continuation ahead of the tasks already waiting, and a batch asked for
 * during a record's decode still waited as long as with no yield at all (docs/pipeline.md, "Where the time goes").
 */
export function yieldToTasks(): Promise<void> {
  return new Promise((resolve) => {
    const immediate = (globalThis as { setImmediate?: Immediate }).setImmediate;
    if (immediate) return void immediate(resolve); // Node: the benches and the tests
    // A browser: a posted message queues behind the messages already there, with none of a nested timer's 4 ms wait.
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(undefined);
  });
}

/**
 * Times a loop of work and yields once a slice has run SLICE_MS: `await slice.yieldIfDue()`
 * between items. `busyMs` is the time spent working, without the turns given away.
 */
export class TimeSlice {
  private sliceStart = performance.now();
  private busy = 0;

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Yields if this slice has run its time; resolves at once otherwise. */
  async yieldIfDue(): Promise<void> {
    const now = performance.now();
    if (now - this.sliceStart < this.sliceMs) return;
    this.busy += now - this.sliceStart;
    await yieldToTasks();
    this.sliceStart = performance.now();
  }

  /** Milliseconds of work so far (the yields' waits left out). */
  get busyMs(): number {
    return this.busy + performance.now() - this.sliceStart;
  }
}
