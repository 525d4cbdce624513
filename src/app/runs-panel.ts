// The runs panel: every run is recorded (train/run-record.ts, kept by
// storage/runs.ts), listed in a table with its time, bytes and fresh examples
// trained to a target accuracy the person sets, and any of them overlaid on one chart
// against steps, training time, bytes read or fresh examples trained. Runs can be
// renamed, deleted, exported (JSON, or one run's points as CSV) and imported.
import uPlot from 'uplot';
import { attachFieldError } from './a11y.js';
import { accuracyRange, WHOLE_INCREMENTS } from './axis.js';
import type { RunStore } from '../storage/runs.js';
import type { EvalMetrics, StepMetrics } from '../train/trainer.js';
import {
  addMark,
  addStep,
  curve,
  freshAfterStep,
  runCsv,
  summarize,
  UNFINISHED_STATES,
  validateRunRecord,
  X_AXES,
  type RunRecord,
  type XAxis,
} from '../train/run-record.js';
import { count, formatBytes, formatLoss } from './format.js';
import { trainedElsewhere } from './run-lock.js';

/** Series colours, told apart also by the dash pattern (see DASHES). */
const PALETTE = ['#c0392b', '#2c5aa0', '#1f7a4d', '#b9770e', '#7d3c98', '#117a8b', '#6e2c00', '#555555'];
const DASHES: number[][] = [[], [6, 3], [2, 2], [8, 3, 2, 3]];
/** Runs an import overlays at most: one per line style. */
const OVERLAY_ON_IMPORT = PALETTE.length * DASHES.length;
const X_LABELS: Record<XAxis, string> = {
  step: 'step',
  time: 'training time (s)',
  mib: 'MiB read (fetched or from the cache)',
  fresh: 'fresh examples trained',
};
/** A record in one of those states, not saved for this long, is not being trained by any tab (or is paused in one). */
const STALE_AFTER_MS = 30_000;
/** A live run's record is written at most this often (and when its state changes). */
const SAVE_EVERY_MS = 3_000;
/** localStorage keys (and the run's id) of live records kept as their page went: IndexedDB writes begun then do not finish. */
const UNSAVED_PREFIX = 'bytelab.run-at-pagehide.';

/** localStorage key of the panel's view (RunsView). */
const VIEW_KEY = 'bytelab-runs-view';

interface RunsView {
  metric: string;
  x: string;
  target: string;
  overlaid: string[];
  /** When it was saved: runs started later are new to it, and overlaid. */
  at: number;
}

/** The view saved by the last visit, if it reads as one. */
function savedView(): RunsView | undefined {
  try {
    const v = JSON.parse(localStorage.getItem(VIEW_KEY) ?? 'null') as Partial<RunsView> | null;
    const ok = v && typeof v.metric === 'string' && typeof v.x === 'string' && typeof v.target === 'string' && typeof v.at === 'number';
    return ok && Array.isArray(v.overlaid) && v.overlaid.every((id) => typeof id === 'string') ? (v as RunsView) : undefined;
  } catch {
    return undefined;
  }
}

/** Another tab's writes are read at most this often (together, after the first of them). */
const NEWS_EVERY_MS = 1000;

export interface RunsPanelElements {
  chart: HTMLElement;
  table: HTMLTableElement;
  metric: HTMLSelectElement;
  x: HTMLSelectElement;
  target: HTMLInputElement;
  exportJson: HTMLButtonElement;
  importFile: HTMLInputElement;
  status: HTMLElement;
  /** The line under Import that says how the last import went. */
  importStatus: HTMLElement;
}

export interface RunsPanel {
  /** A run starts (or a saved run is continued, from `fromStep`): it is recorded from now on. */
  begin(record: Omit<RunRecord, 'steps' | 'evals' | 'marks' | 'updatedAt' | 'state'>, fromStep?: number, freshAtCheckpoint?: number): Promise<void>;
  step(m: StepMetrics): void;
  /** An evaluation, with what always guessing the largest class scores on the test split (when known). */
  eval(m: EvalMetrics, guess?: { name: string; share: number }): void;
  mark(step: number, label: string): void;
  /** The run's checkpoint was written: its record is saved now too, with the steps up to it. */
  checkpointed(): void;
  /** A control changed before the run's first step: the run starts with it, so its settings and `name` (from them) are amended. */
  amend(change: Partial<RunRecord['settings']>, name: (r: RunRecord) => string): void;
  /**
   * The run's pipeline is open: what it trains on, and the readers that run (the readers asked for, at most one per
   * record of the split). A table echoes whole batches whatever echo mode was asked, so its record says 'batches'.
   */
  opened(kind: 'image' | 'tabular', readers: number, datasetName?: string): void;
  state(state: string): void;
  /** The records shown (for the tests). */
  records(): RunRecord[];
}

/** `deleted` hears of each run deleted here (its checkpoint goes with it, so an offer to continue it must go too). */
export function setupRunsPanel(store: RunStore, el: RunsPanelElements, log: (message: string) => void, deleted?: () => void): RunsPanel {
  let all: RunRecord[] = [];
  const overlaid = new Set<string>();
  let live: RunRecord | undefined;
  /** Whether the live run is a new one, not a saved run continued (whose record and checkpoint a 0-step stop must keep). */
  let liveIsNew = false;
  /** Whether the live run's record has been handed to the store (save): a new run's is from its first step. */
  let liveStored = false;
  let lastSaved = 0;
  let drawPending = false;
  let plot: uPlot | undefined;
  const targetError = attachFieldError(el.target);
  /** The view the last visit left (read before this page's first drawing saves its own). */
  const startView = savedView();
  /** The runs have been read once: the view is this page's to save from then on. */
  let viewRead = false;
  let lastViewSaved: string | undefined;
  /** The live run's fresh examples trained so far (a continued run's from its checkpoint's count). */
  let freshCount = 0;
  // Leaving the page (a reload, a closed tab) mid-run: the record, saved every 3 s, misses the steps since (a fast table run
  // reloaded at step 33 was recorded with 1). An IndexedDB write begun now does not finish; localStorage's does, and the
  // next page stores it (recoverUnsaved).
  addEventListener('pagehide', () => {
    if (!live || !liveStored) return;
    live.updatedAt = Date.now();
    try {
      localStorage.setItem(`${UNSAVED_PREFIX}${live.id}`, JSON.stringify(live));
    } catch {
      // Full, or storage off: the last save stands.
    }
  });
  // Back from the back/forward cache: this page goes on, and saves its own record.
  addEventListener('pageshow', (e) => {
    if (e.persisted && live) forgetUnsaved(live.id);
  });
  function forgetUnsaved(id: string): void {
    try {
      localStorage.removeItem(`${UNSAVED_PREFIX}${id}`);
    } catch {
      // Storage off: nothing was kept there.
    }
  }

  /**
   * Stores `run` unless the copy here is as new or newer (renamed here, or continued), or is the live run's: whether it was
   * added, replaced an older copy, or the one here was kept. `add`: false, a run not here is not added (deleted since).
   */
  async function storeIfNewer(run: RunRecord, add: boolean): Promise<'added' | 'newer' | 'kept'> {
    if (run.id === live?.id) return 'kept';
    const here = await store.run(run.id);
    if (here ? here.updatedAt >= run.updatedAt : !add) return 'kept';
    await store.saveRun(run);
    return here ? 'newer' : 'added';
  }

  /** Stores the records pages left with (pagehide) where they are newer than the stored ones. */
  async function recoverUnsaved(): Promise<void> {
    let keys: string[];
    try {
      keys = Object.keys(localStorage).filter((k) => k.startsWith(UNSAVED_PREFIX));
    } catch {
      return; // storage off: the runs are read as stored
    }
    for (const key of keys) {
      const text = localStorage.getItem(key);
      localStorage.removeItem(key);
      try {
        await storeIfNewer(validateRunRecord(JSON.parse(text ?? 'null'), 'the run recorded as its page went'), false);
      } catch (err) {
        log(`a run's last steps, kept as its page went, could not be stored: ${(err as Error).message}`);
      }
    }
  }
  /** An import's outcome is said beside the button, as the model files' is (it was only in the log, at the page's end), and logged. */
  const sayImported = (message: string) => {
    el.importStatus.textContent = message;
    log(message);
  };

  /** The target in percent as typed (50.5, not 51), or undefined: empty (no target) or not a number from 0 to 100 (said beside the field). */
  const target = (): number | undefined => {
    const text = el.target.value.trim();
    const t = text ? Number(text) : Number.NaN; // an empty field is no target, not 0%
    const ok = Number.isFinite(t) && t >= 0 && t <= 100;
    // A number field gives "" for what is not a number ("1e", "--5") as for an empty one: badInput tells them apart.
    const bad = (text !== '' && !ok) || el.target.validity.badInput;
    targetError.textContent = bad ? 'target accuracy must be a number from 0 to 100' : '';
    el.target.setAttribute('aria-invalid', String(bad));
    return ok ? t : undefined;
  };

  /** Reads the recorded runs; the first time, the newest start overlaid (later, what the person ticked stays as it is). */
  async function load(first = false): Promise<void> {
    let read = true;
    try {
      if (first) await recoverUnsaved();
      all = await store.runs();
    } catch (err) {
      log(`the recorded runs could not be read: ${(err as Error).message}`);
      all = [];
      read = false;
    }
    if (live && !all.some((r) => r.id === live!.id)) all.push(live);
    all = all.map((r) => (r.id === live?.id ? live : r));
    if (first) {
      // As the person left them: the runs overlaid then, and those recorded since (in another tab); else the newest 4.
      const view = startView;
      const chosen = view ? all.filter((r) => view.overlaid.includes(r.id) || r.startedAt > view.at) : all.slice(-4);
      for (const r of chosen) overlaid.add(r.id);
    }
    // Runs deleted in another tab leave the overlay too (the status line counts what is overlaid).
    const ids = new Set(all.map((r) => r.id));
    if (read) for (const id of overlaid) if (!ids.has(id)) overlaid.delete(id); // not on a failed read: the choice is kept
    if (read) viewRead = true;
    draw();
  }

  /**
   * Stores the record. A new run's is stored from its first step (or evaluation, or failure): a reload before it then leaves
   * no row of a run that trained nothing (as a Stop then removes it).
   */
  async function save(run: RunRecord): Promise<void> {
    if (run === live && liveIsNew && !liveStored && run.steps.length === 0 && run.evals.length === 0 && run.state !== 'failed') return;
    if (run === live) liveStored = true;
    run.updatedAt = Date.now();
    lastSaved = performance.now();
    await store.saveRun(structuredClone(run)).catch((err: Error) => log(`the run record could not be saved: ${err.message}`));
  }

  function scheduleDraw(): void {
    if (drawPending) return;
    drawPending = true;
    setTimeout(() => {
      drawPending = false;
      draw();
    }, 1000);
  }

  function draw(): void {
    drawTable();
    drawChart();
  }

  function drawChart(): void {
    const metric = el.metric.value === 'loss' ? 'loss' : 'accuracy';
    const x = (X_AXES as readonly string[]).includes(el.x.value) ? (el.x.value as XAxis) : 'step';
    const shown = all.filter((r) => overlaid.has(r.id));
    // uPlot wants one x array: the union of the runs' xs, each run's ys aligned to it (null where it has no point).
    const curves = shown.map((r) => curve(r, metric, x));
    const xs = [...new Set(curves.flatMap((c) => c.xs))].sort((a, b) => a - b);
    const index = new Map(xs.map((v, i) => [v, i]));
    const data: uPlot.AlignedData = [
      xs,
      ...curves.map((c) => {
        const ys: (number | null)[] = new Array(xs.length).fill(null);
        c.xs.forEach((v, i) => (ys[index.get(v)!] = c.ys[i]!));
        return ys;
      }),
    ];
    plot?.destroy();
    const width = Math.max(200, Math.floor(el.chart.clientWidth || 320));
    plot = new uPlot(
      {
        title: `${metric === 'loss' ? 'training loss' : 'test accuracy'} by run`,
        width,
        height: 220,
        scales: { x: { time: false }, ...(metric === 'accuracy' ? { y: { range: (_u, min, max) => accuracyRange(min, max) } } : {}) },
        // Steps and examples are counted: whole ticks (training time and MiB read have fractions).
        axes: [{ label: X_LABELS[x], ...(x === 'step' || x === 'fresh' ? { incrs: WHOLE_INCREMENTS } : {}) }, { size: 56 }],
        legend: { show: shown.length > 0, live: false },
        series: [
          { label: X_LABELS[x] },
          ...shown.map((r, i) => ({
            // Runs of several datasets overlaid: each is named with its dataset (names say model and settings only).
            label: new Set(shown.map((o) => o.dataset)).size > 1 ? `${r.name} · ${r.dataset}` : r.name,
            stroke: PALETTE[i % PALETTE.length],
            dash: DASHES[Math.floor(i / PALETTE.length) % DASHES.length],
            width: 1.5,
            spanGaps: true,
          })),
        ],
      },
      data,
      el.chart,
    );
    el.chart.setAttribute('role', 'img');
    el.chart.setAttribute('aria-label', `${metric} of ${shown.length} runs against ${X_LABELS[x]}`);
  }

  function drawTable(): void {
    const t = target();
    const head = el.table.createTHead();
    head.replaceChildren();
    const hr = head.insertRow();
    // As typed: time to 50.5% is reached at 50.5%, so the header must not say 51%. An empty field is no target ("time to
    // target", the cells "–"); a bad one is "?", with its reason beside the field.
    const pct = t !== undefined ? `${t}%` : noTarget() ? 'target' : '?';
    const columns = [
      'show',
      'run',
      'settings',
      'steps',
      'best acc.',
      'final loss',
      `time to ${pct}`,
      `bytes read to ${pct}`,
      `fresh examples trained to ${pct}`,
    ];
    for (const h of [...columns, 'actions']) {
      const th = document.createElement('th');
      th.textContent = h;
      hr.append(th);
    }
    const body = el.table.tBodies[0] ?? el.table.createTBody();
    // The table is rebuilt at every step of a live run: a control focused in it is focused again in its new row.
    const focused = document.activeElement;
    const refocus =
      focused instanceof HTMLElement && body.contains(focused) ? [focused.closest('tr')?.dataset.run, focused.getAttribute('aria-label')] : undefined;
    body.replaceChildren();
    let guessedRuns = 0;
    for (const r of [...all].reverse()) {
      const s = summarize(r, t === undefined ? Infinity : t / 100);
      const row = body.insertRow();
      row.dataset.run = r.id;
      const show = document.createElement('input');
      show.type = 'checkbox';
      show.checked = overlaid.has(r.id);
      show.setAttribute('aria-label', `overlay ${r.name}`);
      show.addEventListener('change', () => {
        if (show.checked) overlaid.add(r.id);
        else overlaid.delete(r.id);
        drawChart();
        drawStatus(); // "3 overlaid" stayed until the table was next drawn
      });
      row.insertCell().append(show);
      const name = row.insertCell();
      name.textContent = r.name;
      const on = document.createElement('div');
      on.className = 'run-dataset';
      on.textContent = `on ${r.dataset}`;
      name.append(on);
      // A record left in a live state by a page that closed (a crash, a reload) is not running now; one another tab runs is
      // saved every few seconds while it trains.
      const stale = r.id !== live?.id && UNFINISHED_STATES.has(r.state) && Date.now() - r.updatedAt > STALE_AFTER_MS;
      const state = stale ? `${r.state} when last saved, at ${new Date(r.updatedAt).toLocaleTimeString()} (its page may have closed)` : r.state;
      name.title = `${r.dataset}, ${r.model}; started ${new Date(r.startedAt).toLocaleString()}; ${state}`;
      const k = r.settings;
      // A table has one fidelity level and echoes whole batches, whatever the controls said (records from before `kind`: as recorded).
      const tabular = r.kind === 'tabular';
      const group = tabular ? '' : `group ${Number.isFinite(k.fidelity) ? k.fidelity : 'all'}, `;
      // A continuation is marked on the charts but changes no setting: counted apart (it read "1 change").
      const changes = r.marks.filter(([, label]) => label !== 'continued').length;
      const continued = r.marks.length - changes;
      row.insertCell().textContent =
        `${group}echo ${k.echoFactor} (${tabular ? 'batches' : k.echoMode}), batch ${k.batchSize}, lr ${k.learningRate}, seed ${k.seed}` +
        `${changes ? `, ${count(changes, 'change')}` : ''}${continued ? `, continued ${continued === 1 ? 'once' : `${continued} times`}` : ''}`;
      row.insertCell().textContent = s.steps.toLocaleString('en-US');
      row.insertCell().textContent = s.bestAccuracy === undefined ? '–' : `${(100 * s.bestAccuracy).toFixed(1)}%`;
      row.insertCell().textContent = s.finalLoss === undefined ? '–' : formatLoss(s.finalLoss);
      // A target always guessing one class reaches (a table where most rows are "None") is reached at the first evaluation
      // by every run: the cells say so rather than compare nothing.
      const guessed = t !== undefined && r.guess && t / 100 <= r.guess.share ? r.guess : undefined;
      if (guessed) guessedRuns++;
      const timeCell = row.insertCell();
      // No target, nothing to reach: '–' like the other cells, not "not reached".
      timeCell.textContent = guessed
        ? `always “${guessed.name}” scores ${(100 * guessed.share).toFixed(1)}%`
        : t === undefined
          ? '–'
          : s.toTarget
            ? `${s.toTarget.time.toFixed(1)} s (step ${s.toTarget.step})`
            : 'not reached';
      timeCell.className = guessed ? 'guessed' : 'to-target'; // both wrap: "not reached" and "12.3 s (step 40)" took a wide column
      if (guessed) timeCell.title = `the target is at or below what always predicting “${guessed.name}” scores: set one above it to compare runs`;
      row.insertCell().textContent = s.toTarget && !guessed ? formatBytes(s.toTarget.mib * 2 ** 20) : '–';
      const freshCell = row.insertCell();
      freshCell.textContent = s.toTarget && !guessed ? `${s.toTarget.fresh.toLocaleString('en-US')}${r.fresh === 'trained' ? '' : ' read'}` : '–';
      if (s.toTarget && !guessed && r.fresh !== 'trained')
        freshCell.title = 'recorded before runs counted fresh examples trained: fresh examples read, read-ahead included';
      const actions = row.insertCell();
      actions.className = 'run-actions';
      actions.append(
        button('Rename', `rename ${r.name}`, () => rename(r)),
        button('CSV', `download ${r.name} as CSV`, () => download(`${fileName(r.name)}.csv`, runCsv(r), 'text/csv')),
        button('Delete', `delete ${r.name}`, () => remove(r), r.id === live?.id),
      );
    }
    if (refocus) {
      const row = [...body.rows].find((r) => r.dataset.run === refocus[0]);
      [...(row?.querySelectorAll<HTMLElement>('[aria-label]') ?? [])].find((c) => c.getAttribute('aria-label') === refocus[1])?.focus({ preventScroll: true });
    }
    const which = guessedRuns === 1 ? 'one run' : `${guessedRuns} runs`;
    targetNote = guessedRuns ? ` For ${which} the target is no higher than always guessing one class scores: raise it to compare them.` : '';
    if (noTarget() && all.length) targetNote = ' No target accuracy: type one to compare the runs by the time, bytes and examples to it.';
    drawStatus();
  }

  /** The target field is empty, not a bad value: no target. */
  const noTarget = () => el.target.value.trim() === '' && !el.target.validity.badInput;

  /** What the table's last drawing found of the target (drawStatus repeats it when only the overlay changes). */
  let targetNote = '';

  function drawStatus(): void {
    saveView();
    el.status.textContent = all.length
      ? `${count(all.length, 'run')} recorded in this browser; ${overlaid.size} overlaid.${targetNote}`
      : 'No runs recorded yet.';
  }

  /** The panel's view kept for the next visit: the chart's choices, the target, and the runs overlaid (by id) as of `at`. */
  function saveView(): void {
    if (!viewRead) return; // the runs not read yet (or unreadable): the view left by the last visit stands
    const view: Omit<RunsView, 'at'> = { metric: el.metric.value, x: el.x.value, target: el.target.value, overlaid: [...overlaid] };
    const text = JSON.stringify(view);
    if (text === lastViewSaved) return; // drawn at every step of a live run: written when it changes
    lastViewSaved = text;
    try {
      localStorage.setItem(VIEW_KEY, JSON.stringify({ ...view, at: Date.now() }));
    } catch {
      // storage off or full: the view is the default again next time
    }
  }

  function button(text: string, label: string, onClick: () => void, disabled = false): HTMLButtonElement {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.setAttribute('aria-label', label);
    b.disabled = disabled;
    b.addEventListener('click', onClick);
    return b;
  }

  /**
   * `ask()`'s answer about a run, if no other tab trains it: that tab writes the run's record back at its next save (a name
   * given here would be lost, a deletion undone under its checkpoint). Checked again after the question, which another tab
   * may outlast by continuing the run; `instead` says what to do then.
   */
  async function askUnlessElsewhere<T>(r: RunRecord, ask: () => T | undefined, instead: string): Promise<T | undefined> {
    if (await trainedElsewhere(r.id)) return void log(`${r.name} is training in another tab of this lab: ${instead}`);
    const answer = ask();
    if (!answer) return undefined;
    if (await trainedElsewhere(r.id)) return void log(`${r.name} was continued in another tab of this lab meanwhile: ${instead}`);
    return answer;
  }

  async function rename(r: RunRecord): Promise<void> {
    const name = await askUnlessElsewhere(r, () => prompt('Name of the run', r.name)?.trim(), 'rename it there, or once it has stopped');
    if (!name) return;
    const run = all.find((x) => x.id === r.id) ?? r; // as it stands now: the table may have been read again meanwhile
    run.name = name;
    await save(run);
    draw();
  }

  /** Deletes a run's record and checkpoint without asking (a new run stopped before its first step leaves nothing to keep). */
  async function forget(r: RunRecord, stored = true): Promise<void> {
    forgetUnsaved(r.id);
    all = all.filter((x) => x.id !== r.id);
    overlaid.delete(r.id);
    if (stored) await store.deleteRun(r.id).catch((err: Error) => log(`the run could not be deleted: ${err.message}`));
    draw();
  }

  async function remove(r: RunRecord): Promise<void> {
    // Nothing brings a deleted run back: asked first, as Delete of a built dataset is.
    const question = `Delete the run ${r.name}? Its record and any saved checkpoint go from this browser.`;
    if (!(await askUnlessElsewhere(r, () => confirm(question), 'stop it there, then delete it'))) return;
    // This tab may have continued it while the question was open.
    if (r.id === live?.id) return log(`${r.name} was continued meanwhile: stop it, then delete it`);
    const at = [...el.table.tBodies[0]!.rows].findIndex((row) => row.dataset.run === r.id);
    await forget(r);
    log(`deleted the run ${r.name}`);
    // The keyboard's focus goes to the row that took its place (or the one above), not to the page.
    const rows = el.table.tBodies[0]?.rows;
    const next = rows?.[Math.min(at, rows.length - 1)];
    (next?.querySelector<HTMLButtonElement>('button[aria-label^="delete "]:not(:disabled)') ?? el.table.closest<HTMLElement>('[tabindex]'))?.focus();
    deleted?.();
  }

  // The chart's choices as the person left them (before, a reload put back test accuracy, steps and 70%).
  if (startView) {
    const view = startView;
    if ([...el.metric.options].some((o) => o.value === view.metric)) el.metric.value = view.metric;
    if ([...el.x.options].some((o) => o.value === view.x)) el.x.value = view.x;
    el.target.value = view.target;
  }
  el.metric.addEventListener('change', () => {
    drawChart();
    saveView();
  });
  el.x.addEventListener('change', () => {
    drawChart();
    saveView();
  });
  el.target.addEventListener('input', drawTable);
  el.exportJson.addEventListener('click', () => {
    const chosen = all.filter((r) => overlaid.has(r.id));
    download('bytelab-runs.json', JSON.stringify({ format: 'bytelab-runs', version: 1, runs: chosen }), 'application/json');
  });
  el.importFile.addEventListener('change', async () => {
    const file = el.importFile.files?.[0];
    el.importFile.value = '';
    if (!file) return;
    try {
      const text = await file.text();
      if (!text.trim()) throw new Error('the file is empty');
      const json = parseJson(text) as { format?: string; runs?: unknown[] } | null; // or any other JSON value: null, [], 3
      if (json?.format !== 'bytelab-runs' || !Array.isArray(json.runs)) throw new Error('not a bytelab runs file (format "bytelab-runs")');
      const checked = json.runs.map((r, i) => validateRunRecord(r, `run ${i + 1}`));
      const runs = checked.filter((r, i) => checked.findIndex((o) => o.id === r.id) === i); // a run twice in the file is one run
      // A run already here (by id, the live one too) is kept as it is unless the file's copy is newer: an older one would
      // undo a rename, or a continuation; a newer one (continued in another browser) replaces it.
      const added: RunRecord[] = [];
      let newer = 0;
      for (const r of runs) {
        const done = await storeIfNewer(r, true);
        if (done === 'added') added.push(r);
        if (done === 'newer') newer++;
      }
      const kept = runs.length - added.length - newer;
      if (runs.length && !added.length && !newer) {
        sayImported(`nothing new in ${file.name}: its ${count(runs.length, 'run')} ${runs.length === 1 ? 'is' : 'are'} here already`);
        return;
      }
      await load();
      // Past as many curves as there are distinct line styles, more would be lines no one can tell apart (and a legend pages
      // long); the runs the person overlays already count, and stay as they are (those here already too).
      const imported = new Set(added.map((r) => r.id));
      const shownBefore = [...overlaid].filter((id) => !imported.has(id)).length;
      const room = Math.max(0, OVERLAY_ON_IMPORT - shownBefore);
      const overlay = room > 0 ? added.slice(-room) : [];
      for (const r of overlay) overlaid.add(r.id);
      const which = overlay.length === 0 ? 'none' : `the last ${overlay.length} ${kept ? 'imported' : 'in the file'}`;
      const some = overlay.length < added.length ? `; ${which} are overlaid, with the ${shownBefore} shown before (tick "show" for others)` : '';
      const here = kept ? `; ${kept === 1 ? '1 was here already (kept as it is)' : `${kept} were here already (kept as they are)`}` : '';
      const replaced = newer === 1 ? '1 newer copy replaced the one here' : `${newer} newer copies replaced the ones here`;
      if (!added.length) sayImported(`${file.name}: ${replaced}${here}`);
      else sayImported(`imported ${count(added.length, 'run')} from ${file.name}${newer ? `; ${replaced}` : ''}${here}${some}`);
      draw();
    } catch (err) {
      sayImported(`${file.name} was not imported: ${(err as Error).message}`);
    }
  });
  new ResizeObserver(() => {
    const width = Math.floor(el.chart.clientWidth);
    if (plot && width > 0 && width !== plot.width) plot.setSize({ width, height: 220 });
  }).observe(el.chart);
  void load(true);
  // Another tab's runs appear, go on and go as they are saved there (every few seconds while one trains): read at most once a
  // second, after the news that came in it (a debounce would never read while the news kept coming).
  let newsPending = false;
  store.onNews(() => {
    if (newsPending) return;
    newsPending = true;
    setTimeout(() => {
      newsPending = false;
      void load();
    }, NEWS_EVERY_MS);
  });

  return {
    async begin(record, fromStep, freshAtCheckpoint) {
      // A continued run's record as last saved, by this tab or another: the list read here may be a few seconds old (a run
      // stopped in another tab and continued here at once lost the steps that tab saved last).
      const stored = fromStep === undefined ? undefined : await store.run(record.id).catch(() => undefined);
      if (stored) all = all.map((r) => (r.id === stored.id ? stored : r));
      const existing = fromStep === undefined ? undefined : (stored ?? all.find((r) => r.id === record.id));
      live = existing ?? { ...record, fresh: 'trained', updatedAt: Date.now(), state: 'loading', steps: [], evals: [], marks: [] };
      liveIsNew = fromStep === undefined;
      liveStored = false;
      if (existing && fromStep !== undefined) {
        // A continued run goes on from its checkpoint: what the old record has after it is retrained now.
        existing.steps = existing.steps.filter((p) => p[0] <= fromStep);
        existing.evals = existing.evals.filter((p) => p[0] <= fromStep);
        existing.marks = existing.marks.filter((m) => m[0] <= fromStep);
        // Once per checkpoint: a Continue cut off by a reload and pressed again goes on from the same step.
        const last = existing.marks.at(-1);
        if (!(last && last[0] === fromStep && last[1] === 'continued')) existing.marks.push([fromStep, 'continued']);
      }
      // From the checkpoint's own count where it has one: a long record's points are thinned, so its last one kept may be earlier.
      freshCount = fromStep === undefined ? 0 : (freshAtCheckpoint ?? live.steps.at(-1)?.[4] ?? 0);
      if (!all.includes(live)) all.push(live);
      overlaid.add(live.id);
      await save(live);
      draw();
    },
    step(m) {
      if (!live) return;
      // Bytes the run read at its fidelity, whether off the wire or from the prefix cache: what a run costs, not what an earlier run left cached.
      const read = m.pipeline.bytesFetched + m.pipeline.bytesFromCache;
      // A continued record from before fresh examples trained were counted goes on counting reads.
      freshCount = freshAfterStep(freshCount, m.examples, m.echoed);
      const fresh = live.fresh === 'trained' ? freshCount : m.pipeline.examplesRead;
      addStep(live, [m.step, m.time, m.loss, read / 2 ** 20, fresh]);
      if (!liveStored || performance.now() - lastSaved > SAVE_EVERY_MS) void save(live);
      scheduleDraw();
    },
    eval(m, guess) {
      if (!live) return;
      if (guess) live.guess = guess;
      // The evaluated step's own point (a deferred evaluation comes after the run): its time, bytes and fresh examples trained.
      const at = live.steps.findLast((p) => p[0] <= m.step);
      live.evals.push([m.step, m.time, m.accuracy, m.loss, at?.[3] ?? 0, at?.[4] ?? 0]);
      void save(live);
      scheduleDraw();
    },
    checkpointed() {
      // A reload continues from the checkpoint: the record is kept with every step up to it (reported before it was written).
      if (live) void save(live);
    },
    mark(step, label) {
      if (live) addMark(live.marks, step, label);
    },
    amend(change, name) {
      if (!live) return;
      Object.assign(live.settings, change);
      live.name = name(live);
      void save(live);
      draw();
    },
    opened(kind, readers, datasetName) {
      if (!live) return;
      live.kind = kind;
      // Named as its manifest names it (what a checkpoint says): it was recorded under the list's description, or the URL typed.
      if (datasetName) live.dataset = datasetName;
      live.settings.readers = readers;
      if (kind === 'tabular') live.settings.echoMode = 'batches';
      void save(live);
      draw();
    },
    state(state) {
      if (!live) return;
      live.state = state;
      // A new run stopped before its first step (Stop, then Start at once): nothing to compare, so no row. A failed one stays,
      // saying so; a continued one keeps its record and its checkpoint (deleting a record deletes its checkpoint too).
      if (state === 'stopped' && liveIsNew && live.steps.length === 0 && live.evals.length === 0) {
        const gone = live;
        live = undefined;
        void forget(gone, liveStored); // never stored: nothing to delete, nor to tell the other tabs
        return;
      }
      void save(live);
      if (state === 'stopped' || state === 'failed') live = undefined; // ended: it may be deleted now
      draw(); // now, not up to a second later: the table says the run ended as the page does
    },
    records: () => all,
  };
}

/** The file's JSON, or an error that says it is not JSON ("Unexpected token" alone did not say which file format was meant). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`not JSON (${(err as Error).message})`);
  }
}

function fileName(name: string): string {
  return name.replace(/[^\w.-]+/g, '-').slice(0, 80) || 'run';
}

function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
