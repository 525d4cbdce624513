// "Sweep": one run per value of a control, from the page's fields (sweep.ts runs the plan). The fields are checked as typed
// and as the controls change (another dataset has other scan groups); the runs start as Start does, and the swept control
// is the person's again afterwards, as they left it.
import type { LabSession } from '../train/session.js';
import { attachFieldError } from './a11y.js';
import { count } from './format.js';
import { runSweep, type SweepPlan } from './sweep.js';
import { checkSweep } from './validate.js';

/** sessionStorage key of the sweep under way (its plan and run), read after a reload. */
const SWEEP_KEY = 'bytelab-sweep';

/** Each kind's values as the page first offers them: the other kind's are swapped for them, values the person typed are kept. */
const SWEEP_DEFAULTS: Record<string, string> = { group: '6,3,2', echo: '1,2,4' };

/** The swept control, taken for one sweep: set to each value, read back, put back as it was when taken, and let go. */
export interface SweptControl {
  set(value: number): void;
  value(): string;
  restore(): void;
  release(): void;
}

/** What the panel needs from the page. */
export interface SweepHost {
  /** Why Start is off now (empty when it is on): a sweep is refused for the same reasons. */
  startBlockers(): string[];
  /** A run is open or opening: Run sweep does nothing until it ends. */
  runOpen(): boolean;
  /** The chosen dataset's highest scan group. */
  maxGroup(): number;
  /** Why a sweep of `kind` would compare nothing now (auto echo sets the echo factor itself), if it would. */
  refuses(kind: SweepPlan['kind']): string | undefined;
  /** Resolves once the address's parameters are in the controls (the runs start from them). */
  paramsApplied(): Promise<void>;
  takeControl(kind: SweepPlan['kind']): SweptControl;
  /** Starts a run as Start does, ending after `lastStep`; undefined if the page refused it. */
  start(lastStep: number): Promise<LabSession | undefined>;
  stop(): Promise<void>;
  /** A sweep began or ended: the page's controls follow. */
  changed(): void;
}

export interface SweepPanel {
  /** A sweep is under way. */
  readonly running: boolean;
  /** The run's own Stop was pressed: the sweep ends with it (before, it went on with its next value). */
  stopByRun(): void;
  /** A control the sweep relies on changed (auto echo ticked during an echo sweep): the sweep ends, saying why. */
  recheck(): void;
  /** The controls changed: checks the fields again (`blockers`: Start's) and turns Run sweep off while `busy`. */
  refresh(busy: boolean, blockers: string[]): void;
  /** A table is chosen (no scan groups to sweep) or an image dataset is. */
  forTable(tabular: boolean): void;
}

/** Why the sweep under way ends early: Stop sweep ('sweep'), the run's own Stop ('run'), or what host.refuses says now. */
type SweepStop = false | 'sweep' | 'run' | { refused: string };

export function setupSweepPanel(startButton: HTMLButtonElement, stopButton: HTMLButtonElement, host: SweepHost): SweepPanel {
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const kind = $<HTMLSelectElement>('sweep-kind');
  const groupOption = kind.querySelector<HTMLOptionElement>('option[value="group"]')!;
  const fields = { values: $<HTMLInputElement>('sweep-values'), steps: $<HTMLInputElement>('sweep-steps') };
  const status = $('sweep-status');
  /** Each field's error beside it, as the setup fields have theirs (the status line is the sweep's). */
  const errors = { values: attachFieldError(fields.values), steps: attachFieldError(fields.steps) };

  let running = false;
  let cancelled: SweepStop = false;
  /** The kind of the sweep under way. */
  let sweptKind: SweepPlan['kind'] | undefined;
  /** Why the status line last refused a sweep, while it says so: gone once the fields are right again. */
  let refusal: string | undefined;
  /** The kind was moved from group to echo because a table was chosen (forTable). */
  let kindRuled = false;
  /**
   * Values the person typed for the kind a dataset change moved away from (forTable): set aside, not read as the other
   * kind's ("5,4" is a valid echo sweep, and ran as one without a word), and given back when that kind comes back.
   */
  const aside: Partial<Record<SweepPlan['kind'], string>> = {};
  /** What the status line says about values set aside, while it says it. */
  let asideSaid: string | undefined;

  /**
   * Checks the values and the steps each on its own (a known-good other half: 1 is a scan group and an echo factor). A
   * refusal in the status line goes once nothing refused stands.
   */
  function check(blockers = host.startBlockers()): ReturnType<typeof checkSweep> {
    const plan = (values: string, steps: string) => checkSweep(kind.value, values, steps, host.maxGroup());
    for (const [key, r] of [
      ['values', plan(fields.values.value, '1')],
      ['steps', plan('1', fields.steps.value)],
    ] as const) {
      const text = r.ok ? '' : r.reason;
      if (errors[key].textContent !== text) errors[key].textContent = text; // written on change only: it is an alert
      fields[key].setAttribute('aria-invalid', String(!r.ok));
    }
    const whole = plan(fields.values.value, fields.steps.value);
    if (whole.ok && blockers.length === 0 && !host.refuses(whole.value.kind) && refusal !== undefined) {
      if (status.textContent === refusal) status.textContent = '';
      refusal = undefined;
    }
    return whole;
  }

  async function sweep(): Promise<void> {
    await host.paramsApplied();
    if (host.runOpen() || running) return;
    // Its runs start as Start does: refused here, not after the first run could not start.
    const blockers = host.startBlockers();
    const plan = check(blockers);
    const why = !plan.ok ? plan.reason : blockers.length ? `Start is off (${blockers.join('; ')})` : host.refuses(plan.value.kind);
    if (!plan.ok || why) {
      status.textContent = refusal = `not started: ${why}`;
      return;
    }
    running = true;
    cancelled = false;
    sweptKind = plan.value.kind;
    stopButton.disabled = false;
    host.changed();
    let runs = 0;
    // Kept in this tab while the sweep goes, so a reload can say what it cut off (the sweep itself does not survive one).
    const note = () => sessionStorage.setItem(SWEEP_KEY, JSON.stringify({ ...plan.value, run: runs }));
    const control = host.takeControl(plan.value.kind);
    let applied: string | undefined;
    try {
      const outcome = await runSweep(
        plan.value,
        {
          apply(_, value) {
            runs++;
            note();
            control.set(value);
            applied = control.value();
          },
          start: (lastStep) => host.start(lastStep),
          stop: () => host.stop(),
          progress: (m) => (status.textContent = m),
        },
        () => cancelled !== false,
      );
      const stop = cancelled as SweepStop;
      const during = `during run ${runs} of ${plan.value.values.length}`;
      status.textContent =
        outcome === 'done'
          ? `sweep done: ${count(plan.value.values.length, 'run')}, compared in the table above`
          : outcome === 'refused'
            ? 'sweep stopped: a run could not start (see the fields above)'
            : stop === 'run'
              ? `sweep stopped by the run's Stop, ${during}`
              : typeof stop === 'object'
                ? `sweep stopped ${during}: ${stop.refused}`
                : `sweep stopped ${during}`;
    } finally {
      sessionStorage.removeItem(SWEEP_KEY);
      running = false;
      sweptKind = undefined;
      stopButton.disabled = true;
      // Every run of the sweep has been stopped by now; a value the person changed during the sweep is theirs.
      if (control.value() === applied) control.restore();
      control.release();
      host.changed();
    }
  }

  /** A sweep a reload cut off: said in the status line (the runs it finished are in the table). */
  function showCut(): void {
    const text = sessionStorage.getItem(SWEEP_KEY);
    sessionStorage.removeItem(SWEEP_KEY);
    // Only after a reload: a duplicated tab copies this tab's storage while the sweep goes on in the first.
    const how = (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)?.type;
    if (!text || how !== 'reload') return;
    try {
      const cut = JSON.parse(text) as { kind: string; values: number[]; steps: number; run: number };
      status.textContent =
        `the sweep of ${cut.kind} ${cut.values.join(', ')} was cut off by a reload during run ${cut.run} of ${cut.values.length}: ` +
        'the runs it finished are in the table; run the sweep again for the rest';
    } catch {
      // not ours to read: nothing to say
    }
  }

  function kindChanged(): void {
    if (Object.values(SWEEP_DEFAULTS).includes(fields.values.value.trim())) fields.values.value = SWEEP_DEFAULTS[kind.value] ?? '';
  }

  kind.addEventListener('change', () => {
    kindRuled = false; // the person's choice from now on
    for (const k of Object.keys(aside) as SweepPlan['kind'][]) delete aside[k];
    if (asideSaid !== undefined && status.textContent === asideSaid) status.textContent = ''; // its promise is dropped with them
    asideSaid = undefined;
    kindChanged();
    check();
  });
  for (const input of Object.values(fields)) input.addEventListener('input', () => void check());
  startButton.addEventListener('click', () => void sweep());
  stopButton.addEventListener('click', () => {
    cancelled = 'sweep';
  });
  showCut();

  return {
    get running() {
      return running;
    },
    stopByRun() {
      if (running) cancelled = 'run';
    },
    recheck() {
      const why = sweptKind && host.refuses(sweptKind);
      if (running && why && cancelled === false) cancelled = { refused: why };
    },
    refresh(busy, blockers) {
      check(blockers); // the scan groups a sweep may take are the dataset's
      startButton.disabled = busy; // a sweep waits for the run open now (its click did nothing)
    },
    forTable(tabular) {
      groupOption.disabled = tabular;
      // A table has no scan groups to sweep: echo until an image dataset is chosen again, unless the person picks echo meanwhile.
      const to = tabular && kind.value === 'group' ? 'echo' : !tabular && kindRuled ? 'group' : undefined;
      kindRuled = tabular && (kindRuled || to !== undefined);
      if (!to) return;
      // The values typed for the kind left wait aside; the new kind's come back as they were set aside, or as offered.
      const from = kind.value as SweepPlan['kind'];
      const typed = fields.values.value.trim();
      if (typed !== (SWEEP_DEFAULTS[from] ?? '')) aside[from] = typed;
      kind.value = to;
      fields.values.value = aside[to] ?? SWEEP_DEFAULTS[to] ?? '';
      delete aside[to];
      const said = aside.group
        ? `a table has no scan groups: the sweep's values are echo factors; your scan groups ${aside.group} come back with an image dataset`
        : aside.echo
          ? `your echo factors ${aside.echo} come back with a table`
          : '';
      if (status.textContent === asideSaid || said) status.textContent = said;
      asideSaid = said || undefined;
      check(); // the values as the new kind's: "12" is an echo factor, not a scan group
    },
  };
}
