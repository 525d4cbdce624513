// A sweep: the same model and seed trained once per value of one control (scan
// group or echo factor), one run after another for a fixed number of steps, so
// the runs panel fills with the comparison the seeds' plots make. Each run is an
// ordinary run of the lab; the sweep only sets the control, starts, waits, stops.
import type { LabSession } from '../train/session.js';

export interface SweepPlan {
  kind: 'group' | 'echo';
  values: number[];
  steps: number;
}

export interface SweepHooks {
  /** Puts the value into the page's control (slider or echo field). */
  apply(kind: SweepPlan['kind'], value: number): void;
  /** Starts a run as Start does; the session, or undefined if the page refused (a bad field). */
  start(): Promise<LabSession | undefined>;
  stop(): Promise<void>;
  progress(message: string): void;
}

/** Runs the plan; resolves when every run has ended or `cancelled()` says stop (the run under way is stopped). */
export async function runSweep(plan: SweepPlan, hooks: SweepHooks, cancelled: () => boolean): Promise<'done' | 'cancelled' | 'refused'> {
  for (const [i, value] of plan.values.entries()) {
    if (cancelled()) return 'cancelled';
    hooks.apply(plan.kind, value);
    hooks.progress(`sweep run ${i + 1} of ${plan.values.length}: ${plan.kind} ${value}`);
    const run = await hooks.start();
    if (!run) return 'refused';
    // Polled rather than hooked: the sweep sits outside the session's listener, and a quarter second is plenty.
    while (!run.ended && !cancelled() && !finished(run, plan.steps)) await new Promise((r) => setTimeout(r, 250));
    await hooks.stop();
  }
  return cancelled() ? 'cancelled' : 'done';
}

/**
 * A sweep run is done once it has trained its steps and the last evaluation due
 * by then has reported (a stop would cut it off, and the table would miss the
 * run's final accuracy); a run without a test split stops one interval later.
 * A deferred run evaluates when it is stopped: it is done once it has trained its steps.
 */
function finished(run: LabSession, steps: number): boolean {
  const step = run.steps.last()?.step ?? 0;
  if (run.config.evalMode === 'deferred') return step >= steps;
  const every = run.config.evalEvery;
  const due = Math.floor(steps / every) * every;
  return step >= steps && ((run.evals.last()?.step ?? 0) >= due || step >= steps + every);
}
