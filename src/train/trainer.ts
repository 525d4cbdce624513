// The training loop: pulls batches from the pipeline worker, trains a tfjs model
// on the WebGPU backend, evaluates on the test split now and then, and reports
// metrics. Start, pause, resume and stop are safe at any time.
import * as tf from '@tensorflow/tfjs';
import type { Remote } from 'comlink';
import type { Batch, DatasetInfo, PipelineApi, PipelineStats } from '../pipeline/api.js';
import type { Model, ModelInput, ModelSpec } from './models/registry.js';

export interface TrainConfig {
  model: ModelSpec;
  learningRate: number;
  /** Evaluate on the test split every this many steps (and at stop). */
  evalEvery: number;
}

export interface StepMetrics {
  step: number;
  loss: number;
  /** Wall-clock seconds since the run started (pauses excluded). */
  time: number;
  /** Examples trained on per second over the last few steps. */
  imagesPerSecond: number;
  /** Share of the last step's time spent waiting for data: > 0.5 means upstream is the bottleneck. */
  waitFraction: number;
  bytesFetched: number;
  pipeline: PipelineStats;
}

export interface EvalMetrics {
  step: number;
  accuracy: number;
  loss: number;
  examples: number;
}

export type TrainerState = 'idle' | 'loading' | 'running' | 'paused' | 'stopped' | 'failed';

export interface TrainerEvents {
  state(state: TrainerState, detail?: string): void;
  step(m: StepMetrics): void;
  eval(m: EvalMetrics): void;
}

const SPEED_WINDOW = 8;

export class Trainer {
  private state: TrainerState = 'idle';
  private resume: (() => void) | undefined;
  private model: Model | undefined;
  private optimizer: tf.Optimizer | undefined;
  /** The test split, read once and kept on the GPU. */
  private testSet: ModelInput[] = [];

  constructor(
    private readonly train: Remote<PipelineApi>,
    private readonly test: Remote<PipelineApi> | undefined,
    private readonly info: DatasetInfo,
    private readonly config: TrainConfig,
    private readonly on: TrainerEvents,
  ) {}

  get current(): TrainerState {
    return this.state;
  }

  private set(state: TrainerState, detail?: string): void {
    this.state = state;
    this.on.state(state, detail);
  }

  pause(): void {
    if (this.state === 'running') this.set('paused');
  }

  unpause(): void {
    if (this.state !== 'paused') return;
    this.set('running');
    this.resume?.();
  }

  stop(): void {
    if (this.state === 'stopped' || this.state === 'failed') return;
    this.set('stopped');
    this.resume?.();
  }

  /** Runs until stopped or the pipeline ends. */
  async run(): Promise<void> {
    const { info, config } = this;
    this.set('loading');
    try {
      if (config.model.input !== info.kind) throw new Error(`${config.model.label} reads ${config.model.input} data; ${info.name} is ${info.kind}`);
      this.model = config.model.create(info);
      const optimizer = (this.optimizer = tf.train.adam(config.learningRate));
      if (this.test) await this.loadTestSet(this.test);
      this.set('running');
      const times: { t: number; n: number }[] = [];
      let active = 0; // seconds of running time, pauses excluded
      let step = 0;
      while (this.state === 'running' || this.state === 'paused') {
        if (this.state === 'paused') {
          await new Promise<void>((r) => (this.resume = r));
          continue;
        }
        const t0 = performance.now();
        const batch = await this.train.next();
        const t1 = performance.now();
        if (!batch || this.state !== 'running') break;
        const loss = await this.step(batch, optimizer);
        const t2 = performance.now();
        active += (t2 - t0) / 1000;
        step++;
        times.push({ t: active, n: batch.size });
        if (times.length > SPEED_WINDOW) times.shift();
        const span = times.length > 1 ? times[times.length - 1]!.t - times[0]!.t : (t2 - t0) / 1000;
        const examples = times.length > 1 ? times.slice(1).reduce((s, x) => s + x.n, 0) : batch.size;
        const stats = await this.train.stats();
        this.on.step({ step, loss, time: active, imagesPerSecond: examples / span, waitFraction: (t1 - t0) / (t2 - t0), bytesFetched: stats.bytesFetched, pipeline: stats });
        if (this.test && step % config.evalEvery === 0) this.on.eval(await this.evaluate(step));
      }
      if (this.test && step > 0 && step % config.evalEvery !== 0) this.on.eval(await this.evaluate(step));
      if (this.state === 'running') this.set('stopped', 'the data stream ended');
    } catch (err) {
      this.set('failed', (err as Error).message);
      throw err;
    } finally {
      this.dispose();
    }
  }

  private async step(batch: Batch, optimizer: tf.Optimizer): Promise<number> {
    const model = this.model!;
    const classes = this.info.classes.length;
    const input = model.prepare(batch);
    try {
      const loss = tf.tidy(() => optimizer.minimize(() => model.loss(model.logits(input), input, classes), true)!);
      const value = (await loss.data())[0]!;
      loss.dispose();
      return value;
    } finally {
      input.dispose();
    }
  }

  /** The test split is read once, at full fidelity, and kept on the GPU. */
  private async loadTestSet(test: Remote<PipelineApi>): Promise<void> {
    for (;;) {
      const batch = await test.next();
      if (!batch) break;
      this.testSet.push(this.model!.prepare(batch));
    }
  }

  private async evaluate(step: number): Promise<EvalMetrics> {
    const model = this.model!;
    const classes = this.info.classes.length;
    let correct = 0;
    let lossSum = 0;
    let n = 0;
    for (const input of this.testSet) {
      const [hits, loss] = tf.tidy(() => {
        const logits = model.logits(input);
        return [tf.equal(tf.argMax(logits, 1), input.labels).sum(), model.loss(logits, input, classes).mul(input.size)];
      });
      correct += (await hits!.data())[0]!;
      lossSum += (await loss!.data())[0]!;
      tf.dispose([hits!, loss!]);
      n += input.size;
    }
    return { step, accuracy: n ? correct / n : NaN, loss: n ? lossSum / n : NaN, examples: n };
  }

  private dispose(): void {
    for (const input of this.testSet) input.dispose();
    this.testSet = [];
    this.model?.dispose();
    this.optimizer?.dispose();
  }
}
