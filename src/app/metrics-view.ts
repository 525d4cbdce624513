// What a run measures, as the page shows it: the tiles (step, loss, accuracy, speed, bytes, cache share, wait, epochs),
// the four live charts, the echo reading and counters, and the test split's confusion matrix and mistakes. Steps come
// many times a second; the tiles and readings are drawn a few times a second (the charts take every point).
import type { DatasetInfo, PipelineStats } from '../pipeline/api.js';
import type { Checkpoint } from '../train/checkpoint.js';
import type { EchoReading } from '../train/echo-advisor.js';
import type { LabSession } from '../train/session.js';
import { classTotals, type EvalMetrics, type StepMetrics } from '../train/trainer.js';
import { accuracyRange } from './axis.js';
import { LiveChart } from './charts.js';
import { describeEchoReading } from './echo-reading.js';
import { count, describeTocWork, formatBytes, formatLoss } from './format.js';
import { baselineLine, drawConfusion, drawMistakes, majorityClass } from './model-view.js';
import { drawThrottled } from './throttle.js';

/** The run whose figures are shown: what it trains on and how it reads. */
export interface ShownRun {
  info: DatasetInfo;
  /** The number of shares the training records are split into (URL share=); 1 when this tab reads them all. */
  shares: number;
  /** The readers the run opened. */
  readers: number;
  /** A TOC model's first-layer columns (k), which decide what its batches cache. */
  tocColumns?: number;
}

/** The echo controls as they are when a reading is drawn: a suggestion equal to the factor set is not offered. */
export interface EchoControls {
  auto: boolean;
  factor: number;
}

export function setupMetricsView(echoControls: () => EchoControls) {
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const tile = {
    step: $('m-step'),
    loss: $('m-loss'),
    acc: $('m-acc'),
    accBase: $('m-acc-base'),
    speed: $('m-speed'),
    speedLabel: $('m-speed-k'),
    bytes: $('m-bytes'),
    cache: $('m-cache'),
    wait: $('m-wait'),
    epoch: $('m-epoch'),
  };
  const charts = {
    loss: new LiveChart($('chart-loss'), 'training loss', 'step', '#c0392b'),
    // Within [0, 1]: uPlot padded a flat accuracy of 0.895 to an axis from 0 to 1.79.
    acc: new LiveChart($('chart-acc'), 'test accuracy', 'step', '#1f7a4d', accuracyRange),
    speed: new LiveChart($('chart-speed'), 'examples / s', 'step', '#2c5aa0'),
    bytes: new LiveChart($('chart-bytes'), 'MiB fetched', 'step', '#7d3c98'),
  };
  const confusion = $<HTMLTableElement>('confusion');
  const mistakes = $('mistakes');
  const testSplitHint = $('test-split-hint');
  const echoReading = $('echo-reading');
  const echoCounters = $('echo-counters');
  const echoUse = $<HTMLButtonElement>('echo-use');
  const tocWork = $('toc-work');
  const TEST_SPLIT_HINT = testSplitHint.textContent ?? '';

  let run: ShownRun | undefined;
  /** The accuracy tile's value without the pending evaluations (deferred evaluation adds them). */
  let accuracy = '–';
  /** The step that accuracy was measured at (deferred evaluation shows older steps' while the run is further on). */
  let accuracyStep: number | undefined;
  // The latest of each, drawn at the next draw.
  let lastStep: StepMetrics | undefined;
  let lastEcho: { r: EchoReading; factor: number } | undefined;
  let lastCounters: { p: PipelineStats; steps: number } | undefined;

  function showStep(m: StepMetrics): void {
    tile.step.textContent = String(m.step);
    tile.loss.textContent = formatLoss(m.loss);
    // Whole examples where there are many (131,579, not 131578.9); one decimal where a slow model does a few a second.
    tile.speed.textContent = m.examplesPerSecond.toLocaleString('en-US', { maximumFractionDigits: m.examplesPerSecond < 100 ? 1 : 0 });
  }

  /** The pipeline's counters: the newest of the steps' and those read between steps, and once more as the run ends. */
  function showCounters(p: PipelineStats, steps: number): void {
    tile.bytes.textContent = formatBytes(p.bytesFetched);
    // Fresh examples read over the split's size (this tab's share of it): the pipeline reads a few records ahead of training.
    if (run) tile.epoch.textContent = (p.examplesRead / (run.info.examples / run.shares)).toFixed(2);
    // A continued run reads some records again to rebuild where it stood: said, not counted as fresh.
    const reread = p.examplesReread ? ` · ${count(p.examplesReread, 'example')} read again to continue` : '';
    // Readers that ran dry have left the turn (the log says which and why).
    const opened = run?.readers ?? 0;
    const reading = p.readers < opened ? ` · ${p.readers} of ${opened} readers still reading` : '';
    echoCounters.textContent =
      `${count(p.examplesRead, 'fresh example')} read · ${count(p.examplesEchoed, 'echoed copy', 'echoed copies')} · ` +
      `${count(steps, 'SGD step')} · ${count(p.duplicatesInBatches, 'repeat')} within a batch${reread}${reading}`;
    tocWork.hidden = p.tocNonZeros === 0;
    if (p.tocNonZeros > 0) tocWork.textContent = describeTocWork(p.tocTerms, p.tocNonZeros, run?.tocColumns);
  }

  /** Where the time goes, and the echo factor it suggests. */
  function showEcho(r: EchoReading, factor: number): void {
    echoReading.textContent = describeEchoReading(r, factor);
    // Over the last steps, weighted by time: a single step's share flickers, since data arrives a record at a time.
    tile.wait.textContent = `${(100 * r.waitShare).toFixed(0)}%`;
    // Against the control, not the reading's factor: a reading drawn after "Use echo" was clicked must not bring it back.
    const controls = echoControls();
    echoUse.hidden = controls.auto || r.suggested === controls.factor;
    echoUse.dataset.value = String(r.suggested);
    echoUse.textContent = `Use echo ${r.suggested}`;
  }

  const draw = drawThrottled(() => {
    if (lastStep) showStep(lastStep);
    if (lastEcho) showEcho(lastEcho.r, lastEcho.factor);
    if (lastCounters) showCounters(lastCounters.p, lastCounters.steps);
    lastStep = lastEcho = lastCounters = undefined;
  });

  /** The accuracy tile and the line under it: what always guessing the largest class would score. */
  function showAccuracy(value: number, step: number, classCounts: number[] | undefined): ReturnType<typeof majorityClass> | undefined {
    accuracy = tile.acc.textContent = `${(100 * value).toFixed(1)}%`;
    accuracyStep = step;
    const base = run && classCounts && majorityClass(run.info.classes, classCounts);
    tile.accBase.textContent = base ? baselineLine(value, base) : '';
    return base;
  }

  return {
    /** Marked on every chart (a control changed, the run was continued). */
    mark(step: number, label: string): void {
      for (const c of Object.values(charts)) c.mark(step, label);
    },
    /** The marks' labels, in order (the test API's). */
    markLabels: () => charts.loss.markLabels,

    /** Clears what the previous run drew. */
    reset(): void {
      lastStep = lastEcho = lastCounters = undefined; // a draw the last run asked for draws nothing
      run = undefined;
      for (const c of Object.values(charts)) c.clear();
      tile.step.textContent = '0';
      tile.loss.textContent = tile.acc.textContent = tile.speed.textContent = tile.wait.textContent = '–';
      accuracy = '–';
      tile.acc.title = '';
      tile.accBase.textContent = '';
      tile.bytes.textContent = '0 B';
      tile.cache.textContent = tile.epoch.textContent = '–';
      confusion.replaceChildren();
      mistakes.replaceChildren();
      testSplitHint.textContent = TEST_SPLIT_HINT;
      echoReading.textContent = echoCounters.textContent = '';
      echoUse.hidden = true;
      tocWork.hidden = true;
    },

    /** The run's pipeline is open: what it reads, and how its speed is counted (rows of a table, images otherwise). */
    opened(shown: ShownRun): void {
      run = shown;
      const tabular = shown.info.kind === 'tabular';
      tile.speedLabel.textContent = tabular ? 'rows/s' : 'images/s';
      charts.speed.rename(tabular ? 'rows / s' : 'images / s');
    },

    /** The test split, or why there is none: said where the confusion matrix would be (it said one would come after each evaluation). */
    testSplit(present: boolean, why?: 'none' | 'unreadable'): void {
      const what = why === 'unreadable' ? 'test split could not be read (see the log)' : 'dataset has no test split';
      testSplitHint.textContent = present ? TEST_SPLIT_HINT : `This run's ${what}: no accuracy, confusion matrix or mistakes.`;
    },

    /** A step: its point on the charts now; the tiles, with the counters it brought (or `counters`, if newer), at the next draw. */
    step(m: StepMetrics, counters: PipelineStats): void {
      lastStep = m;
      lastCounters = { p: counters, steps: m.step };
      draw();
      charts.loss.push(m.step, m.loss);
      charts.speed.push(m.step, m.examplesPerSecond);
      charts.bytes.push(m.step, m.bytesFetched / 1024 ** 2);
    },
    /** Counters read between steps. */
    counters(p: PipelineStats, steps: number): void {
      lastCounters = { p, steps };
      draw();
    },
    /** The counters as the run ended: drawn after the last step's figures (a late draw of those would cover them). */
    totals(p: PipelineStats, steps: number): void {
      draw.flush();
      showCounters(p, steps);
    },
    /** The last figures now, before the controls open again. */
    flush: () => draw.flush(),
    echo(r: EchoReading, factor: number): void {
      lastEcho = { r, factor };
      draw();
    },
    /** The TOC work line is the last run's, not the dataset chosen now's. */
    hideTocWork(): void {
      tocWork.hidden = true;
    },
    /** The echo factor suggested is no longer offered (the run ended, or the person set the factor or auto echo). */
    hideSuggestion(): void {
      echoUse.hidden = true;
    },
    /** The trainer has had no batch for `ms` (a stall): the tiles and the reading say so until the next step. */
    stalled(ms: number): void {
      tile.wait.textContent = '100%';
      tile.speed.textContent = '0';
      echoReading.textContent = `No batch for ${Math.round(ms / 1000)} s: the trainer waits for data.`;
    },

    eval(m: EvalMetrics): ReturnType<typeof majorityClass> | undefined {
      const base = showAccuracy(m.accuracy, m.step, classTotals(m.confusion));
      charts.acc.push(m.step, m.accuracy);
      if (run) {
        drawConfusion(confusion, run.info.classes, m.confusion, m.examples);
        if (run.info.image) drawMistakes(mistakes, run.info.classes, run.info.image, m.mistakes);
      }
      return base;
    },
    /** Deferred evaluation: the accuracy so far (none until the run stops) and the saved steps still to evaluate. */
    pendingEvals(n: number): void {
      // "43.9% · 3 pending" beside step 45 read as step 45's accuracy: it was step 10's.
      tile.acc.textContent = n === 0 ? accuracy : accuracy === '–' ? `${n} pending` : `${accuracy} at step ${accuracyStep} · ${n} pending`;
      tile.acc.title = n === 0 ? '' : `deferred evaluation: the weights of ${n} steps are kept and evaluated when the run stops`;
      // An empty box for the whole run read as a broken chart.
      charts.acc.waitingFor(n > 0 ? `Evaluated when the run stops: the weights of ${n} step${n === 1 ? '' : 's'} are kept.` : undefined);
    },
    /** The run failed: a deferred evaluation's steps were not evaluated, and the empty chart says so rather than wait on. */
    failed(): void {
      if (charts.acc.waiting) charts.acc.waitingFor('Not evaluated: the run failed before it stopped.');
    },
    /** A continued run's history up to its checkpoint, at `step`, marked where it goes on. */
    restored(h: Checkpoint['history'], step: number): void {
      for (const [at, loss, speed, mib] of h.steps) {
        charts.loss.push(at, loss);
        charts.speed.push(at, speed);
        charts.bytes.push(at, mib);
      }
      for (const [at, value] of h.evals) charts.acc.push(at, value);
      const last = h.evals.at(-1);
      if (last) showAccuracy(last[1], last[0], h.classCounts);
      tile.step.textContent = String(step);
      for (const c of Object.values(charts)) c.mark(step, 'continued');
    },
    /** The share of what the run read that came from the prefix cache. */
    cacheShare(t: LabSession['fetchTotals']): void {
      const total = t.bytes + t.cachedBytes;
      tile.cache.textContent = total ? `${((100 * t.cachedBytes) / total).toFixed(0)}%` : '–';
      tile.cache.title = `${formatBytes(t.cachedBytes)} of ${formatBytes(total)} read came from the cache; ${t.hits} of ${t.records} records without a request`;
    },
  };
}
