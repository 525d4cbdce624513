// The training loop: pulls batches from the pipeline, trains a tfjs model, and
// evaluates on the test split now and then. It owns no run state: the session
// tells it when to wait (pause) and when to give up (its AbortSignal), and
// hears which phase it is in (training or evaluating).
//
// The loop never waits on the GPU for a value each step: each step's loss is
// read back asynchronously and reported in order, with at most `readbackDepth`
// readbacks in flight (which also keeps the CPU from running far ahead of the
// GPU). Evaluation sums its metrics on the GPU and reads them back once.
//
// Evaluation is live (the default: the loop evaluates at every evalEvery-th
// step, and the run waits for it) or deferred: the loop keeps a copy of the
// weights at that step (tf.clone shares the tensor until the next update
// replaces it, so a snapshot costs no copy on the GPU) with the step's trainer
// clock, and the snapshots are evaluated when the run ends or is stopped
// (evaluatePending). Each evaluation reports the step and time it belongs to.
import * as tf from '@tensorflow/tfjs';
import { adam, type LabAdam } from '../gpu/adam.js';
import { batchTransferables, type Batch, type DatasetInfo, type PipelineStats } from '../pipeline/api.js';
import { hash32 } from '../shared/random.js';
import { abortable } from './abort.js';
import type { Model, ModelInput, ModelSpec } from './models/registry.js';
import { SpeedMeter } from './speed-meter.js';

export interface TrainConfig {
  model: ModelSpec;
  learningRate: number;
  /** Evaluate on the test split every this many steps. */
  evalEvery: number;
  /** Loss readbacks allowed in flight; 0 reads each step's loss before the next (the old, stalling way). */
  readbackDepth?: number;
  /** Evaluate as the run goes (live, the default) or keep snapshots of the weights and evaluate them when it ends (deferred). */
  evalMode?: EvalMode;
  /** The run's seed: the model's initial weights are drawn from it (ModelSpec.create). */
  seed?: number;
}

export const EVAL_MODES = ['live', 'deferred'] as const;
export type EvalMode = (typeof EVAL_MODES)[number];

const DEFAULT_READBACK_DEPTH = 2;

/**
 * The test split is read once and kept: on the GPU up to TEST_ON_GPU_BYTES of batches (each evaluation then uploads
 * nothing), the rest on the CPU, uploaded a batch at a time at each evaluation, up to TEST_ON_CPU_BYTES more. Past
 * that the rest is not read, and accuracy is measured on the examples kept (TestSplitKept says how many). Large
 * images fill these fast: 340 test images at 1024x1024x3 are 4.3 GB as float32.
 */
export const TEST_ON_GPU_BYTES = 512 * 1024 ** 2;
export const TEST_ON_CPU_BYTES = 2 * 1024 ** 3;

/** What prepare() kept of the test split. */
export interface TestSplitKept {
  examples: number;
  /** Of those, the examples kept on the CPU and uploaded at each evaluation. */
  onCpu: number;
  /** Whether the split had more than the limits let it keep (the rest was not read). */
  cut: boolean;
}

/** A kept test batch: uploaded once (gpu), or kept as read and uploaded for each evaluation (cpu). */
type TestBatch = { gpu: ModelInput; cpu?: undefined } | { gpu?: undefined; cpu: Batch };

export interface StepMetrics {
  step: number;
  loss: number;
  /** Wall-clock seconds since the run started (pauses excluded). */
  time: number;
  /** Examples (images or table rows) trained on per second over the last few steps. */
  examplesPerSecond: number;
  /** Share of the last step's time spent waiting for data: > 0.5 means upstream is the bottleneck. */
  waitFraction: number;
  /** Examples in the step's batch. */
  examples: number;
  /** Of those, the echoed copies (Batch.echoed): the rest are the fresh examples the step trained. */
  echoed: number;
  /** A hash of the batch's example ids, in order: equal keys mean the same examples in the same order (exact resume is checked with it). */
  batchKey: number;
  /** The step's own time on the trainer's side (model, optimiser, readback waits), without the wait for data: downstream time per step. */
  computeMs: number;
  /** The step's wait for its batch. */
  waitMs: number;
  /**
   * The part of waitMs before the pipeline had the batch ready (Batch.readyAt): a wait for data. The rest is the
   * hand-over: the ask and the reply crossing between page and worker, each taken when its thread is free.
   */
  dataWaitMs: number;
  bytesFetched: number;
  pipeline: PipelineStats;
}

/** What a trained model is at a step: its variables and the optimiser's (Adam's step count and moments), as plain arrays. */
export interface ModelState {
  /** In the order Model.variables() lists them. */
  weights: { shape: number[]; data: Float32Array }[];
  /** Adam's step count: its bias correction depends on it. */
  iterations: number;
  /**
   * beta1^t and beta2^t as Adam has multiplied them up, step by step, in float32:
   * setWeights recomputes them as one power, which differs in the last bits.
   */
  betaPowers: [number, number];
  /** First moments, then second moments, one per variable, as Adam keeps them. */
  moments: { shape: number[]; data: Float32Array }[];
  /** Deferred evaluation: the weights kept at evaluation steps and not evaluated yet, oldest first (left out when none). */
  pending?: PendingEvaluation[];
}

/** A deferred evaluation still to be made: the weights at `step`, with the trainer clock then. */
export interface PendingEvaluation {
  step: number;
  time: number;
  weights: ModelState['weights'];
}

/** Where a continued run starts: its step count and running time so far. */
export interface RunStart {
  step: number;
  time: number;
}

export interface EvalMetrics {
  step: number;
  /** The trainer clock at that step (StepMetrics.time): with deferred evaluation the evaluation itself comes later. */
  time: number;
  /** True when the weights were evaluated after the run (deferred evaluation), from a snapshot taken at the step. */
  deferred?: boolean;
  accuracy: number;
  loss: number;
  examples: number;
  /** classes x classes counts, row-major: confusion[t * classes + p] test examples of class t predicted as p. */
  confusion: number[];
  /** A few misclassified test images (image datasets), from the first test batch. */
  mistakes: Mistake[];
}

/** The test examples of each true class: the row sums of a confusion matrix (EvalMetrics.confusion). */
export function classTotals(confusion: number[]): number[] {
  const k = Math.round(Math.sqrt(confusion.length));
  return Array.from({ length: k }, (_, t) => confusion.slice(t * k, (t + 1) * k).reduce((a, b) => a + b, 0));
}

/** A misclassified test image: its pixels (as the model saw them, 0..255) and its true and predicted classes. */
export interface Mistake {
  label: number;
  predicted: number;
  pixels: Uint8Array;
}

/** Misclassified images an evaluation reports. */
const MISTAKES_SHOWN = 8;

/** What the trainer reads batches from: the pipeline worker's comlink proxy, or a fake in tests. */
export interface BatchSource {
  next(): Promise<Batch | null>;
  stats(): Promise<PipelineStats> | PipelineStats;
}

export interface TrainerHooks {
  /** Aborted when the run is stopped: the loop returns promptly, mid-wait or mid-evaluation. */
  signal: AbortSignal;
  /** Resolves when the next step may run (at once unless paused; also on stop). */
  gate(): Promise<void>;
  /** The loop entered or left an evaluation. */
  phase(phase: 'training' | 'evaluating'): void;
  step(m: StepMetrics): void;
  eval(m: EvalMetrics): void;
  /** Deferred evaluation: snapshots waiting to be evaluated, told when one is taken or evaluated. */
  pending?(count: number): void;
  /** Asked after every step: whether to capture the model now (a checkpoint); the loop waits only for the copy on the GPU. */
  checkpointDue?(step: number): boolean;
  checkpoint?(state: Promise<ModelState>, at: RunStart): void;
  /** The run ends after this step (a sweep's runs), as when the stream ends: evaluated once more, and 'ended'. */
  lastStep?: number;
}

/** The model's weights at a step, kept for a deferred evaluation: clones of Model.variables(), in order. */
interface Snapshot {
  step: number;
  time: number;
  weights: tf.Tensor[];
  /** Read back for the first checkpoint taken while it waits, and kept for the later ones (the weights never change). */
  saved?: Promise<PendingEvaluation>;
}

export class Trainer {
  private model: Model | undefined;
  private optimizer: LabAdam | undefined;
  /** The test split, read once and kept (TEST_ON_GPU_BYTES). */
  private testSet: TestBatch[] = [];
  /** The first test batch's images on the CPU, to show misclassified ones. */
  private firstTestImages: Float32Array | undefined;
  private firstTestLabels: Int32Array | undefined;
  private disposed = false;
  /** Steps trained and running time, as of the last step: where a checkpoint taken between steps stands. */
  position: RunStart = { step: 0, time: 0 };
  /**
   * Since when (performance.now()) the loop has waited for its next batch; undefined while it trains, evaluates or
   * waits at the gate. The model is between steps then, as at the gate, so a checkpoint can be taken without it.
   */
  waitingSince: number | undefined;
  /** Deferred evaluation: the snapshots not evaluated yet, in step order. */
  private snapshots: Snapshot[] = [];

  constructor(
    private readonly info: DatasetInfo,
    private readonly config: TrainConfig,
  ) {
    if (config.model.input !== info.kind) throw new Error(`${config.model.label} reads ${config.model.input} data; ${info.name} is ${info.kind}`);
  }

  /** The optimiser's learning rate now (the configured one before prepare). */
  get learningRate(): number {
    return (this.optimizer?.getConfig().learningRate as number | undefined) ?? this.config.learningRate;
  }

  /** Changes the learning rate from the next step on: Adam reads it at every update, and its moments are kept. */
  setLearningRate(lr: number): void {
    this.config.learningRate = lr;
    // tfjs keeps it in a protected field that applyGradients reads each step; there is no setter.
    if (this.optimizer) (this.optimizer as unknown as { learningRate: number }).learningRate = lr;
  }

  /** Builds the model and optimizer (from a saved state when given), and reads the test split (onto the GPU as far as it fits). */
  async prepare(
    test: BatchSource | undefined,
    signal: AbortSignal,
    restore?: ModelState,
    limits = { gpu: TEST_ON_GPU_BYTES, cpu: TEST_ON_CPU_BYTES },
  ): Promise<TestSplitKept> {
    this.model = this.config.model.create(this.info, this.config.seed);
    this.optimizer = adam(this.config.learningRate);
    if (restore) await this.restore(restore);
    const kept: TestSplitKept = { examples: 0, onCpu: 0, cut: false };
    let onGpu = 0;
    let onCpu = 0;
    while (test) {
      const batch = await abortable(test.next(), signal);
      if (!batch) break;
      const bytes = batchTransferables(batch).reduce((n, b) => n + b.byteLength, 0);
      if (onGpu + bytes > limits.gpu && onCpu + bytes > limits.cpu && this.testSet.length > 0) {
        kept.cut = true;
        break;
      }
      if (this.testSet.length === 0 && batch.kind === 'image') {
        this.firstTestImages = batch.x.slice();
        this.firstTestLabels = batch.y.slice();
      }
      if (onGpu + bytes <= limits.gpu || this.testSet.length === 0) {
        onGpu += bytes;
        this.testSet.push({ gpu: this.model.prepare(batch) });
      } else {
        onCpu += bytes;
        kept.onCpu += batch.size;
        this.testSet.push({ cpu: batch });
      }
      kept.examples += batch.size;
    }
    return kept;
  }

  get hasTestSet(): boolean {
    return this.testSet.length > 0;
  }

  /**
   * Trains until the signal aborts (returns 'stopped'), or the stream ends or the
   * run reaches hooks.lastStep (evaluates once more and returns 'ended'). Throws on a real failure.
   */
  /** `evaluateFirst`: evaluate before the first step (a run that starts from a loaded model shows where it starts). */
  async run(train: BatchSource, hooks: TrainerHooks, from: RunStart = { step: 0, time: 0 }, evaluateFirst = false): Promise<'stopped' | 'ended'> {
    const { signal } = hooks;
    const model = this.model!;
    const optimizer = this.optimizer!;
    const classes = this.info.classes.length;
    const depth = this.config.readbackDepth ?? DEFAULT_READBACK_DEPTH;
    const speed = new SpeedMeter();
    const inFlight: Promise<void>[] = [];
    let reported: Promise<void> = Promise.resolve();
    let active = from.time; // seconds of running time, pauses excluded
    let step = from.step;
    let warmedUp = false;
    this.position = { ...from };
    if (this.snapshots.length) hooks.pending?.(this.snapshots.length); // restored from a checkpoint
    if (evaluateFirst && this.hasTestSet) await speed.outside(() => this.evaluationDue(step, active, hooks));

    // The next batch is asked for while this one trains, so the worker's reply (a message each way, and whatever
    // else the page is doing when it lands) overlaps the step instead of adding to it; the stream asks its readers
    // further ahead (takeInTurn). The order is the stream's: a resume counts trained batches (the step), not batches
    // asked for. The counters are asked once the batch is in, so they are those it came with (Batch.stats).
    const ask = () => {
      const reply = train.next().then(async (batch) => [batch, await train.stats()] as const);
      reply.catch(() => undefined); // a reply abandoned by a stop may fail unobserved
      return reply;
    };
    let ahead = ask();
    // An evaluation or a checkpoint waits for the steps still on the GPU: they are reported first, so their time counts as
    // training (on the speed's clock and the run's), not as the (excluded) time of what waits for them. Returns its ms.
    const drain = async (): Promise<number> => {
      const t = performance.now();
      await abortable(reported, signal);
      return performance.now() - t;
    };
    for (;;) {
      if (hooks.lastStep !== undefined && step >= hooks.lastStep) break; // also a run continued at or past it
      await speed.outside(() => hooks.gate());
      if (signal.aborted) return 'stopped';
      const t0 = performance.now();
      this.waitingSince = performance.now();
      let answer: Awaited<typeof ahead>;
      try {
        answer = await abortable(ahead, signal);
      } finally {
        this.waitingSince = undefined;
      }
      const [batch, stats] = answer;
      const t1 = performance.now();
      if (!batch) break;
      ahead = ask();
      await speed.outside(() => hooks.gate()); // a pause while waiting for data holds this batch until resume
      if (signal.aborted) return 'stopped';
      // Not abortable: a stop in it must find the weights put back (a checkpoint reads them).
      if (!warmedUp) await speed.outside(() => warmUp(model, batch, classes, this.config.learningRate));
      warmedUp = true;
      if (signal.aborted) return 'stopped';
      const t1resumed = performance.now(); // the warm-up is off the clock, as a pause is

      const input = model.prepare(batch);
      let lossTensor: tf.Scalar;
      try {
        lossTensor = tf.tidy(() => optimizer.minimize(() => model.loss(model.logits(input), input, classes), true)!);
      } finally {
        input.dispose();
      }
      // The readback starts now; the loop waits only when `depth` earlier ones are still in flight.
      const value = readScalars(lossTensor);
      if (depth === 0) await abortable(value, signal);
      while (inFlight.length > 0 && inFlight.length >= depth) await abortable(inFlight.shift()!, signal);
      const t2 = performance.now();
      const stepMs = t2 - t0 - (t1resumed - t1); // a pause while holding the batch does not count
      step++;
      active += stepMs / 1000;
      this.position = { step, time: active };
      const partial = {
        step,
        time: active,
        waitFraction: (t1 - t0) / stepMs,
        examples: batch.size,
        echoed: batch.echoed ?? 0,
        batchKey: hash32(...batch.ids),
        computeMs: t2 - t1resumed,
        waitMs: t1 - t0,
        // A source that does not say when the batch was ready: all of the wait counts as waiting for data.
        dataWaitMs: batch.readyAt === undefined ? t1 - t0 : Math.min(t1 - t0, Math.max(0, batch.readyAt - performance.timeOrigin - t0)),
        bytesFetched: stats.bytesFetched,
        pipeline: stats,
      };

      // Reported in step order once the loss arrives; the loop goes on meanwhile.
      reported = Promise.all([reported, value]).then(([, v]) => {
        if (!signal.aborted) hooks.step({ ...partial, examplesPerSecond: speed.reported(partial.examples), loss: v[0]! });
      });
      reported.catch(() => undefined); // a readback abandoned by a stop may still fail unobserved
      inFlight.push(reported);
      this.lastReport = reported;

      // The evaluation and checkpoint keep this step's time, as the step was reported with; the drain counts from the next step.
      let drainedMs = 0;
      if (this.hasTestSet && step % this.config.evalEvery === 0) {
        drainedMs += await drain();
        await speed.outside(() => this.evaluationDue(step, active, hooks));
      }
      // After the evaluation (which changes no weights), so the checkpoint's history has it.
      if (hooks.checkpointDue?.(step)) {
        drainedMs += await drain();
        hooks.checkpoint?.((await speed.outside(() => this.capture()))(), { step, time: active });
      }
      active += drainedMs / 1000;
    }
    await abortable(reported, signal);
    if (this.hasTestSet && step > from.step && step % this.config.evalEvery !== 0) await this.evaluationDue(step, active, hooks);
    if (this.snapshots.length) {
      hooks.phase('evaluating');
      await this.evaluatePending(signal, hooks);
      if (!signal.aborted) hooks.phase('training');
    }
    return 'ended';
  }

  /** Deferred evaluation: snapshots taken and not evaluated yet. */
  get pendingEvaluations(): number {
    return this.snapshots.length;
  }

  /** An evaluation is due at `step`: live, evaluate now; deferred, keep the weights for later. */
  private async evaluationDue(step: number, time: number, hooks: TrainerHooks): Promise<void> {
    if (this.config.evalMode !== 'deferred') return this.evaluateAndReport(step, time, hooks);
    const weights = tf.tidy(() => this.model!.variables().map((v) => tf.clone(v)));
    this.snapshots.push({ step, time, weights });
    hooks.pending?.(this.snapshots.length);
  }

  /**
   * Evaluates the snapshots of a deferred run, oldest first, each reported with
   * its own step and time; then the model has its current weights back. Call it
   * between steps or after the run (the session does so after a stop). Stops at
   * `signal`; every snapshot is disposed either way.
   */
  async evaluatePending(signal: AbortSignal, hooks: Pick<TrainerHooks, 'eval' | 'pending'>): Promise<void> {
    const variables = this.model!.variables();
    const current = tf.tidy(() => variables.map((v) => tf.clone(v)));
    try {
      while (this.snapshots.length && !signal.aborted) {
        const snap = this.snapshots[0]!;
        tf.tidy(() => variables.forEach((v, i) => v.assign(snap.weights[i]!)));
        const m = await this.evaluate(snap.step, signal);
        this.snapshots.shift();
        await snap.saved?.catch(() => undefined); // a checkpoint may still be reading these weights
        tf.dispose(snap.weights);
        if (signal.aborted) break;
        hooks.eval({ ...m, time: snap.time, deferred: true });
        hooks.pending?.(this.snapshots.length);
      }
    } finally {
      tf.tidy(() => variables.forEach((v, i) => v.assign(current[i]!)));
      tf.dispose(current);
    }
  }

  /** The latest step's report (losses are read back a few steps late). */
  private lastReport: Promise<void> = Promise.resolve();

  /** Resolves once every step trained so far has been reported: a run about to stop shows the steps its checkpoint holds. */
  reportsDone(): Promise<void> {
    return this.lastReport.catch(() => undefined);
  }

  private async evaluateAndReport(step: number, time: number, hooks: TrainerHooks): Promise<void> {
    hooks.phase('evaluating');
    const m = await this.evaluate(step, hooks.signal);
    if (hooks.signal.aborted) return;
    hooks.eval({ ...m, time });
    hooks.phase('training');
  }

  /**
   * Accuracy, mean loss and the confusion matrix over the test split, summed on
   * the GPU and read back once; and the first test batch's predictions, for a
   * few misclassified images.
   */
  async evaluate(step: number, signal: AbortSignal): Promise<Omit<EvalMetrics, 'time'>> {
    const model = this.model!;
    const classes = this.info.classes.length;
    // [loss * examples, then the confusion matrix row by row]; accuracy is its trace.
    let sums = tf.zeros([1 + classes * classes]) as tf.Tensor1D;
    let firstPredictions: tf.Tensor1D | undefined;
    let n = 0;
    try {
      for (const kept of this.testSet) {
        if (signal.aborted) break;
        const input = kept.gpu ?? model.prepare(kept.cpu);
        let next: tf.Tensor1D;
        try {
          next = tf.tidy(() => {
            const logits = model.logits(input);
            const predicted = tf.argMax(logits, 1) as tf.Tensor1D;
            if (!firstPredictions && this.firstTestImages) firstPredictions = tf.keep(predicted.toInt());
            const confusion = tf.math.confusionMatrix(input.labels, predicted.toInt(), classes).reshape([-1]).cast('float32');
            const loss = model.loss(logits, input, classes).mul(input.size).reshape([1]);
            return sums.add(tf.concat([loss, confusion])) as tf.Tensor1D;
          });
        } finally {
          if (kept.cpu) input.dispose(); // uploaded for this evaluation only
        }
        sums.dispose();
        sums = next;
        n += input.size;
      }
    } catch (err) {
      // A batch that fails (the GPU out of memory, say) fails the evaluation, not leaving its sums on the GPU.
      tf.dispose([sums, ...(firstPredictions ? [firstPredictions] : [])]);
      throw err;
    }
    const [values, predictions] = await abortable(
      Promise.all([readScalars(sums), firstPredictions ? readScalars(firstPredictions) : Promise.resolve(undefined)]),
      signal,
    );
    const confusion = Array.from(values.subarray(1), Math.round);
    const correct = confusion.reduce((s, v, i) => (i % (classes + 1) === 0 ? s + v : s), 0);
    return {
      step,
      accuracy: n ? correct / n : NaN,
      loss: n ? values[0]! / n : NaN,
      examples: n,
      confusion,
      mistakes: predictions ? this.mistakes(predictions) : [],
    };
  }

  /** The first few test images of the first batch that the model got wrong. */
  private mistakes(predictions: Float32Array | Int32Array): Mistake[] {
    const images = this.firstTestImages!;
    const labels = this.firstTestLabels!;
    const per = images.length / labels.length;
    const out: Mistake[] = [];
    for (let i = 0; i < labels.length && out.length < MISTAKES_SHOWN; i++) {
      if (predictions[i] === labels[i]) continue;
      const pixels = Uint8Array.from(images.subarray(i * per, (i + 1) * per), (v) => Math.round(v * 255));
      out.push({ label: labels[i]!, predicted: predictions[i]!, pixels });
    }
    return out;
  }

  /**
   * Copies the model's and the optimiser's variables on the GPU and returns the
   * reading of the copies. Call it between steps (the run's loop does, and a
   * paused run is between steps): once it returns, the next step may change the
   * variables; the copies are what is read.
   */
  async capture(): Promise<() => Promise<ModelState>> {
    const optimizer = this.optimizer!;
    const [iterations, ...moments] = await optimizer.getWeights();
    const copies = tf.tidy(() => [...this.model!.variables(), ...moments.map((m) => m.tensor)].map((v) => tf.clone(v)));
    const iterationsCopy = iterations!.tensor; // a new scalar each call (saveIterations): ours to dispose
    const betaPowers = optimizer.betaPowers;
    const variableCount = copies.length - moments.length;
    for (const snap of this.snapshots) snap.saved ??= readArrays(snap.weights).then((weights) => ({ step: snap.step, time: snap.time, weights }));
    const pending = this.snapshots.map((snap) => snap.saved!);
    const read = async (): Promise<ModelState> => {
      try {
        const arrays = await readArrays(copies);
        const [iters] = await iterationsCopy.data();
        const state: ModelState = { weights: arrays.slice(0, variableCount), iterations: iters!, betaPowers, moments: arrays.slice(variableCount) };
        return pending.length ? { ...state, pending: await Promise.all(pending) } : state;
      } finally {
        tf.dispose([...copies, iterationsCopy]);
      }
    };
    return read;
  }

  /** Puts a saved state into the new model and optimiser; throws if it does not fit this model. */
  private async restore(state: ModelState): Promise<void> {
    const variables = this.model!.variables();
    const fitsModel = (weights: ModelState['weights']) =>
      weights.length === variables.length && weights.every((w, i) => w.shape.join() === variables[i]!.shape.join());
    const fits =
      fitsModel(state.weights) &&
      (state.moments.length === 0 || state.moments.length === 2 * variables.length) &&
      (state.pending ?? []).every((p) => fitsModel(p.weights));
    if (!fits) {
      const shapes = (list: { shape: number[] }[]) => list.map((v) => `[${v.shape}]`).join(' ');
      throw new Error(`the saved model does not fit ${this.config.model.label}: saved ${shapes(state.weights)}, model ${shapes(variables)}`);
    }
    tf.tidy(() => variables.forEach((v, i) => v.assign(tf.tensor(state.weights[i]!.data, state.weights[i]!.shape))));
    // Adam pairs its moments with the variables by position, in the order minimize() lists them: the order they were made.
    const iterations = { name: 'iter', tensor: tf.scalar(state.iterations, 'int32') };
    const moments = state.moments.map((m, i) => ({ name: `moment${i}`, tensor: tf.tensor(m.data, m.shape) }));
    await this.optimizer!.setWeights([iterations, ...moments]);
    tf.dispose([iterations.tensor, ...moments.map((m) => m.tensor)]);
    this.optimizer!.betaPowers = state.betaPowers;
    // A deferred run's evaluations still to make: they are made when the continued run ends or stops.
    this.snapshots = (state.pending ?? []).map((p) => ({
      step: p.step,
      time: p.time,
      weights: p.weights.map((w) => tf.tensor(w.data, w.shape)),
      saved: Promise.resolve(p),
    }));
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const snap of this.snapshots) tf.dispose(snap.weights);
    this.snapshots = [];
    for (const kept of this.testSet) kept.gpu?.dispose();
    this.testSet = [];
    this.model?.dispose();
    this.optimizer?.dispose();
  }
}

/**
 * One step on the run's first batch with a throwaway optimiser, then the weights put back as they were: the GPU
 * compiles the step's pipelines here, off the run's clock. Without it a page's first run paid them inside its first
 * steps (the tiny CNN on SwiftShader: step 8 at 3.2 s, the next run's at 0.4 s), which made whichever run of a
 * sweep came first look slower, and its time to a target later. Later runs find the pipelines compiled: one step's cost.
 */
async function warmUp(model: Model, batch: Batch, classes: number, learningRate: number): Promise<void> {
  const variables = model.variables();
  const before = variables.map((v) => tf.clone(v));
  const scratch = adam(learningRate); // the run's own Adam keeps its moments and step count untouched
  let input: ReturnType<Model['prepare']> | undefined;
  try {
    input = model.prepare(batch);
    const prepared = input;
    await readScalars(tf.tidy(() => scratch.minimize(() => model.loss(model.logits(prepared), prepared, classes), true)!));
  } finally {
    input?.dispose();
    variables.forEach((v, i) => v.assign(before[i]!));
    tf.dispose(before);
    scratch.dispose();
  }
}

/** Reads a small tensor back and disposes it, whether or not anyone still waits for the values. */
function readScalars(t: tf.Tensor): Promise<Float32Array> {
  return (t.data() as Promise<Float32Array>).finally(() => t.dispose());
}

/** Tensors' values as plain arrays, with their shapes. */
const readArrays = (tensors: tf.Tensor[]): Promise<ModelState['weights']> =>
  Promise.all(tensors.map(async (t) => ({ shape: t.shape, data: (await t.data()) as Float32Array })));
