// What the lab keeps of every run, to compare runs side by side: its settings,
// its steps and evaluations with the four things a curve can be drawn against
// (steps, training time, bytes read, fresh examples trained), and the marks
// where a control changed. Kept in IndexedDB (storage/runs.ts), exported and
// imported as JSON, a run's points as CSV. No DOM here.

/** What a curve can be drawn against. */
export type XAxis = 'step' | 'time' | 'mib' | 'fresh';
export const X_AXES: readonly XAxis[] = ['step', 'time', 'mib', 'fresh'];

/**
 * One step: [step, seconds of training, loss, MiB read (fetched or from the prefix cache), fresh examples trained]. Fresh
 * examples are those handed to the trainer that are not echoed copies (freshAfterStep); records made before they were
 * (no `fresh` field) hold fresh examples read there, records read ahead included.
 */
export type StepPoint = [step: number, time: number, loss: number, mib: number, fresh: number];
/** One evaluation: [step, seconds, test accuracy, test loss, MiB read, fresh examples trained (as StepPoint)]. */
export type EvalPoint = [step: number, time: number, accuracy: number, loss: number, mib: number, fresh: number];

export interface RunRecord {
  /** The session's run id: a run continued after a reload goes on in the same record. */
  id: string;
  name: string;
  startedAt: number;
  updatedAt: number;
  dataset: string;
  model: string;
  /** What the run trained on, once its pipeline opened (records made before it was kept: unknown). */
  kind?: 'image' | 'tabular';
  /** What the fresh column counts: 'trained' (StepPoint); left out, records from before: fresh examples read, read-ahead included. */
  fresh?: 'trained';
  /**
   * The settings the run started training with (fidelity and echo may change during the run: see marks); once the pipeline
   * opened, the readers that ran (a split has at most one per record) and, for a table, echoMode 'batches' (what tables echo).
   */
  settings: { batchSize: number; seed: number; learningRate: number; fidelity: number; echoFactor: number; echoMode: string; readers: number };
  /** The run's state when last saved (a run cut off by a reload stays "running" until continued). */
  state: string;
  steps: StepPoint[];
  evals: EvalPoint[];
  /** Where a control changed: [step, label], e.g. [120, "group 2"]. */
  marks: [number, string][];
  /** What always predicting the test split's largest class scores (from an evaluation's confusion matrix): a target at or below it says nothing. */
  guess?: { name: string; share: number };
}

/** Steps a record keeps: beyond this, every other one is dropped (the curve's shape survives, the size stays bounded). */
const MAX_STEP_POINTS = 4_000;

const X_INDEX: Record<XAxis, { step: number; eval: number }> = {
  step: { step: 0, eval: 0 },
  time: { step: 1, eval: 1 },
  mib: { step: 3, eval: 4 },
  fresh: { step: 4, eval: 5 },
};

/** The control a mark's label names: "group 3", "echo 2" or "auto echo 2.5", "echo batches", "lr 0.01", "continued". */
function markedControl(label: string): string {
  if (/^(auto )?echo [\d.]+$/.test(label)) return 'echo factor';
  if (/^echo [a-z]/.test(label)) return 'echo mode';
  return label.split(' ')[0]!;
}

/**
 * Adds a mark ("group 3" at step 20). A mark of the same control at the same step goes: changes quicker than a step (a
 * slider dragged while the run waits for data) leave the value it went on with, not a pile of labels over one another.
 */
export function addMark(marks: [number, string][], step: number, label: string): void {
  const same = marks.findIndex(([at, l]) => at === step && markedControl(l) === markedControl(label));
  if (same >= 0) marks.splice(same, 1);
  marks.push([step, label]);
}

export function addStep(run: RunRecord, p: StepPoint): void {
  run.steps.push(p);
  if (run.steps.length > MAX_STEP_POINTS) run.steps = run.steps.filter((_, i) => i % 2 === 0 || i === run.steps.length - 1);
}

/** A curve of the run: accuracy from its evaluations, loss from its steps, against `x`. */
export function curve(run: RunRecord, metric: 'accuracy' | 'loss', x: XAxis): { xs: number[]; ys: number[] } {
  const points = metric === 'accuracy' ? run.evals : run.steps;
  const xi = metric === 'accuracy' ? X_INDEX[x].eval : X_INDEX[x].step;
  const yi = 2;
  // A diverged run's last loss (NaN, Infinity) is no point on a chart: uPlot lost its scale, and every run's curve.
  const plotted = points.filter((p) => Number.isFinite(p[yi]));
  return { xs: plotted.map((p) => p[xi]!), ys: plotted.map((p) => p[yi]!) };
}

export interface RunSummary {
  steps: number;
  bestAccuracy: number | undefined;
  finalLoss: number | undefined;
  /** The first evaluation at or above the target: when, at what cost. */
  toTarget: { step: number; time: number; mib: number; fresh: number } | undefined;
}

/** What the comparison table shows of a run, for a target test accuracy in [0, 1]. */
export function summarize(run: RunRecord, target: number): RunSummary {
  const hit = run.evals.find((e) => e[2] >= target);
  return {
    steps: run.steps.at(-1)?.[0] ?? 0,
    bestAccuracy: run.evals.length ? Math.max(...run.evals.map((e) => e[2])) : undefined,
    finalLoss: run.steps.at(-1)?.[2],
    toTarget: hit && { step: hit[0], time: hit[1], mib: hit[4], fresh: hit[5] },
  };
}

/**
 * A run's steps and evaluations as one CSV table (evaluation columns empty on steps without one). The fifth column was
 * `fresh_examples` (examples read); it is named for what the record counts, so a script cannot mistake one for the other.
 * The fourth, MiB read whether fetched or from the cache (the runs chart's x axis), was `mib_fetched`, which a run served
 * all from the cache ("fetched 0 B" on the page) contradicted.
 */
export function runCsv(run: RunRecord): string {
  const evals = new Map(run.evals.map((e) => [e[0], e]));
  const fresh = run.fresh === 'trained' ? 'fresh_examples_trained' : 'fresh_examples_read';
  const rows = [`step,time_s,loss,mib_read,${fresh},test_accuracy,test_loss`];
  for (const [step, time, loss, mib, fresh] of run.steps) {
    const e = evals.get(step);
    rows.push([step, time.toFixed(3), loss, mib.toFixed(4), fresh, e?.[2] ?? '', e?.[3] ?? ''].join(','));
  }
  return `${rows.join('\n')}\n`;
}

/**
 * Fresh examples trained after a step of `examples` examples, `echoed` of them echoed copies (StepMetrics.echoed, from the
 * batch itself), counted on from `before`. Exact at any echo factor and mode: not the pipeline's counters, which run ahead
 * of the trainer by the batches a reader queued, the copies in its shuffle buffer and (TOC) whole records parsed.
 */
export function freshAfterStep(before: number, examples: number, echoed: number): number {
  return before + examples - Math.min(examples, echoed);
}

/** Checks an imported run; throws naming the first thing wrong (and which run in the file). */
export function validateRunRecord(value: unknown, where: string): RunRecord {
  const r = value as RunRecord;
  const numbers = (rows: unknown, width: number) =>
    Array.isArray(rows) && rows.every((p) => Array.isArray(p) && p.length === width && p.every((v) => typeof v === 'number'));
  const problem =
    typeof r !== 'object' || r === null
      ? 'not an object'
      : typeof r.id !== 'string' || !r.id
        ? 'no id'
        : typeof r.name !== 'string'
          ? 'no name'
          : !numbers(r.steps, 5)
            ? 'steps are not [step, time, loss, MiB, fresh] rows'
            : !numbers(r.evals, 6)
              ? 'evals are not [step, time, accuracy, loss, MiB, fresh] rows'
              : !Array.isArray(r.marks)
                ? 'no marks'
                : typeof r.settings !== 'object' || r.settings === null
                  ? 'no settings'
                  : r.guess !== undefined && (typeof r.guess?.name !== 'string' || typeof r.guess.share !== 'number')
                    ? 'guess is not { name, share }'
                    : undefined;
  if (problem) throw new Error(`${where}: ${problem}`);
  // JSON has no Infinity: full fidelity (every scan group) was exported as null.
  if (r.settings.fidelity === null) r.settings.fidelity = Infinity;
  return r;
}

/** States a record is left in by a page that closed mid-run (a live run's record says its state as it goes). */
export const UNFINISHED_STATES: ReadonlySet<string> = new Set(['loading', 'running', 'paused', 'evaluating', 'stopping']);
