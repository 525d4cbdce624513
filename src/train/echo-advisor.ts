// Reads, from the last steps, where the time goes: upstream time per fresh batch
// (fetch, decode, augment: the pipeline's busy time over the batches of fresh
// examples it read) and downstream time per step (the trainer's own), and their
// ratio R. Choi et al. (2019): with R > 1 the accelerator idles (R - 1) / R of
// the time, and an echo factor e <= R turns that idle time into SGD steps on
// repeated data; beyond R, echoing only adds repeats. So the advice is e = R.
import type { StepMetrics } from './trainer.js';

export interface EchoReading {
  /** Milliseconds the stages before the trainer spend per batch of fresh examples. */
  upstreamMsPerBatch: number;
  /** Milliseconds the trainer spends per step, waits for data excluded. */
  downstreamMsPerStep: number;
  /** upstream / downstream. */
  ratio: number;
  /** Share of the window's time the trainer waited for data (time-weighted: data arrives a record at a time, so most waits fall on few steps). */
  waitShare: number;
  /** Share of the window's time the trainer waited for batches the pipeline had ready: their hand-over from the worker to the page. */
  deliveryShare: number;
  /** The echo factor that would keep the trainer busy: R rounded to a half, 1 to 16. */
  suggested: number;
}

/** Steps the trainer's own time per step is averaged over. */
const STEP_WINDOW = 20;
/**
 * Records read that the upstream reading spans at least: fresh examples arrive
 * a record (often many batches) at a time while the clocks run on smoothly, so
 * a window of a few steps sees a whole record or none and R swings from 0 to
 * several times its value (auto echo then chased it).
 */
const MIN_RECORDS = 5;
/** Steps kept at most: the upstream reading spans fewer records when this many steps read fewer. */
const MAX_STEPS = 1000;

type Clock = 'loopBusyMs' | 'decodeMs' | 'linkBusyMs';
const recordsRead = (m: StepMetrics) => m.pipeline.recordsFetched + m.pipeline.cacheHits;

export class EchoAdvisor {
  private readonly window: StepMetrics[] = [];

  /** Adds a step; the reading over the last steps, once there are enough of them and the pipeline read fresh data meanwhile. */
  push(m: StepMetrics): EchoReading | undefined {
    this.window.push(m);
    if (this.window.length > MAX_STEPS) this.window.shift();
    if (this.window.length < 5) return undefined;
    // Upstream: from the latest step that leaves MIN_RECORDS records read in the window (or the oldest kept).
    const minSteps = Math.min(STEP_WINDOW, this.window.length);
    let from = this.window.length - minSteps;
    while (from > 0 && recordsRead(m) - recordsRead(this.window[from]!) < MIN_RECORDS) from--;
    const first = this.window[from]!;
    const steps = this.window.slice(from + 1);
    const recent = this.window.slice(-minSteps + 1);
    // Each clock over the window, per reader (readers work side by side); the slowest stage sets the pace.
    // The largest of the differences, not the difference of a running largest, which dips when the lead changes.
    const per = (clock: Clock) => (m.pipeline[clock] - first.pipeline[clock]) / Math.max(1, m.pipeline.readers);
    const busy = Math.max(per('loopBusyMs'), per('decodeMs'), per('linkBusyMs'));
    const fresh = m.pipeline.examplesRead - first.pipeline.examplesRead;
    const perBatch = steps.reduce((n, s) => n + s.examples, 0) / steps.length;
    if (fresh <= 0 || busy <= 0 || perBatch <= 0) return undefined;
    const upstreamMsPerBatch = busy / (fresh / perBatch);
    const downstreamMsPerStep = recent.reduce((t, s) => t + s.computeMs, 0) / recent.length;
    const ratio = upstreamMsPerBatch / Math.max(1e-3, downstreamMsPerStep);
    const waited = steps.reduce((t, s) => t + s.waitMs, 0);
    const forData = steps.reduce((t, s) => t + s.dataWaitMs, 0);
    const total = Math.max(1e-9, waited + steps.reduce((t, s) => t + s.computeMs, 0));
    const suggested = Math.min(16, Math.max(1, Math.round(ratio * 2) / 2));
    return { upstreamMsPerBatch, downstreamMsPerStep, ratio, waitShare: forData / total, deliveryShare: (waited - forData) / total, suggested };
  }

  reset(): void {
    this.window.length = 0;
  }
}
