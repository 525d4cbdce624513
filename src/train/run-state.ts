// The life of one training run as an explicit state machine. One LabSession
// owns one machine; every change of state goes through `to`, which refuses a
// transition the table below does not list. docs/architecture.md draws it.

export type RunState = 'idle' | 'loading' | 'running' | 'paused' | 'evaluating' | 'stopping' | 'stopped' | 'failed';

/** The states each state may move to. stopped and failed are final: a new run is a new session. */
export const TRANSITIONS: Readonly<Record<RunState, readonly RunState[]>> = {
  idle: ['loading', 'stopped'],
  loading: ['running', 'stopping', 'failed'],
  running: ['paused', 'evaluating', 'stopping', 'stopped', 'failed'],
  paused: ['running', 'evaluating', 'stopping', 'stopped', 'failed'], // evaluating: the step it paused in ends in one; stopped: the stream ended
  evaluating: ['running', 'paused', 'stopping', 'stopped', 'failed'],
  stopping: ['stopped', 'failed'],
  stopped: [],
  failed: [],
};

/** States in which a run holds workers or GPU memory. */
export const LIVE_STATES: ReadonlySet<RunState> = new Set(['loading', 'running', 'paused', 'evaluating', 'stopping']);

export class IllegalTransitionError extends Error {
  override name = 'IllegalTransitionError';
}

export class RunStateMachine {
  private current: RunState = 'idle';

  constructor(private readonly onChange: (state: RunState, detail?: string) => void) {}

  get state(): RunState {
    return this.current;
  }

  get isFinal(): boolean {
    return TRANSITIONS[this.current].length === 0;
  }

  can(next: RunState): boolean {
    return TRANSITIONS[this.current].includes(next);
  }

  /** Moves to `next`; throws if the table does not allow it (a bug, not a user error). */
  to(next: RunState, detail?: string): void {
    if (!this.can(next)) throw new IllegalTransitionError(`run state: ${this.current} -> ${next} is not allowed`);
    this.current = next;
    this.onChange(next, detail);
  }
}
