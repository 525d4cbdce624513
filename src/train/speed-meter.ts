// Examples/s as the run delivers them: counted when a step's loss is read back
// (its GPU work done), not when the step was queued. The trainer queues a step
// and goes on while up to two readbacks are out, so the first steps of a run
// whose pipelines are already compiled (a second run, Stop then Start) return
// long before the GPU has done them: timed by the loop, steps 2-3 read 2-3x the
// steady speed and the chart's scale went with them. Time outside training
// (pauses, evaluations, checkpoints) is left out, as from the run's clock.
import { RingBuffer } from './ring-buffer.js';

export class SpeedMeter {
  private excludedMs = 0;
  private outsideSince: number | undefined;
  private examples = 0;
  /** (active ms, examples read back by then): the run's start, then one per step reported; the last `window` + 1. */
  private readonly marks: RingBuffer<{ at: number; examples: number }>;

  constructor(
    window = 8,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.marks = new RingBuffer(window + 1);
    this.marks.push({ at: this.activeMs(), examples: 0 });
  }

  /** Runs `work` with the clock stopped: time that is not training. */
  async outside<T>(work: () => Promise<T>): Promise<T> {
    if (this.outsideSince !== undefined) return work(); // already stopped
    this.outsideSince = this.now();
    try {
      return await work();
    } finally {
      this.excludedMs += this.now() - this.outsideSince;
      this.outsideSince = undefined;
    }
  }

  /** A step of `examples` was read back (steps report in order): examples/s over the last `window` steps' reports. */
  reported(examples: number): number {
    this.examples += examples;
    this.marks.push({ at: this.activeMs(), examples: this.examples });
    const first = this.marks.first()!;
    const last = this.marks.last()!;
    return last.at > first.at ? (1000 * (last.examples - first.examples)) / (last.at - first.at) : 0;
  }

  private activeMs(): number {
    const now = this.now();
    return now - this.excludedMs - (this.outsideSince !== undefined ? now - this.outsideSince : 0);
  }
}
