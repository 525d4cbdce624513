// A sweep: the same model and seed trained once per value of one control (scan
// group or echo factor), one run after another for a fixed number of steps, so
// the runs panel fills with the comparison the seeds' plots make. Each run is an
// ordinary run of the lab that ends itself after its steps; the sweep only sets the control, starts and waits.
import type { LabSession } from '../train/session.js';

export interface SweepPlan {
  kind: 'group' | 'echo';
  values: number[];
  steps: number;
}

export interface SweepHooks {
  /** Puts the value into the page's control (slider or echo field). */
  apply(kind: SweepPlan['kind'], value: number): void;
  /** Starts a run as Start does, ending after `lastStep` (SessionConfig.lastStep); the session, or undefined if the page refused (a bad field). */
  start(lastStep: number): Promise<LabSession | undefined>;
  stop(): Promise<void>;
  progress(message: string): void;
}

/**
 * Runs the plan; resolves when every run has ended or `cancelled()` says stop (the run under way is stopped). Each run ends
 * itself after its steps, with its last evaluation (the session's lastStep): every run of a sweep trains the same steps.
 */
export async function runSweep(plan: SweepPlan, hooks: SweepHooks, cancelled: () => boolean): Promise<'done' | 'cancelled' | 'refused'> {
  for (const [i, value] of plan.values.entries()) {
    if (cancelled()) return 'cancelled';
    hooks.apply(plan.kind, value);
    hooks.progress(`sweep run ${i + 1} of ${plan.values.length}: ${plan.kind} ${value}`);
    const run = await hooks.start(plan.steps);
    if (!run) return 'refused';
    // Polled rather than hooked: the sweep sits outside the session's listener, and a quarter second is plenty.
    while (!run.ended && !cancelled()) await new Promise((r) => setTimeout(r, 250));
    await hooks.stop(); // a cancelled run; one that ended has nothing to stop
  }
  return cancelled() ? 'cancelled' : 'done';
}
